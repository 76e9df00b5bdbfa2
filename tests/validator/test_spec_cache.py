"""The spec's cache across processes: written once per content of the YAML, read instead of parsing it, and a
cache entry that cannot be read costs only the parse."""
from __future__ import annotations

import pytest

from validator import spec as spec_module
from validator.spec import default_spec_path, read_spec_document


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OBVALIDATE_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_the_cache_holds_what_the_yaml_says(fresh_cache, monkeypatch) -> None:
    parsed = read_spec_document(default_spec_path())
    (entry,) = fresh_cache.glob("spec-*.marshal")

    def no_parse(_data):
        raise AssertionError("the YAML was parsed although the cache holds it")

    monkeypatch.setattr(spec_module, "_parse_yaml", no_parse)
    assert read_spec_document(default_spec_path()) == parsed
    assert parsed["openapi"].startswith("3.1") and parsed["components"]["schemas"]
    assert [p.name for p in fresh_cache.glob("spec-*.marshal")] == [entry.name]


def test_another_spec_is_another_entry(fresh_cache, tmp_path_factory) -> None:
    read_spec_document(default_spec_path())
    other = tmp_path_factory.mktemp("spec") / "openapi.yaml"
    other.write_bytes(default_spec_path().read_bytes() + b"\n# an edit\n")
    read_spec_document(other)
    assert len(list(fresh_cache.glob("spec-*.marshal"))) == 2


def test_an_unreadable_entry_costs_only_the_parse(fresh_cache, monkeypatch) -> None:
    parsed = read_spec_document(default_spec_path())
    (entry,) = fresh_cache.glob("spec-*.marshal")
    entry.write_bytes(b"\x00 not marshal data")
    assert read_spec_document(default_spec_path()) == parsed  # parsed again, and the entry rewritten
    monkeypatch.setattr(spec_module, "_parse_yaml", lambda _data: pytest.fail("the rewritten entry was not used"))
    assert read_spec_document(default_spec_path()) == parsed


def test_derived_values_are_remembered_per_spec_and_code(fresh_cache, tmp_path_factory) -> None:
    spec = spec_module._load.__wrapped__(str(default_spec_path()))  # a Spec of its own, not the process's
    calls = []

    def compute():
        calls.append(1)
        return ("kinds", frozenset({"a"}), (1, 2.5, True, None))

    code = tmp_path_factory.mktemp("code") / "deriving.py"
    code.write_text("x = 1\n")
    first = spec.derived("sample", compute, str(code))
    assert spec.derived("sample", compute, str(code)) == first and len(calls) == 1  # read, not computed
    code.write_text("x = 2\n")  # the deriving code changed: never the old entry
    assert spec.derived("sample", compute, str(code)) == first and len(calls) == 2
    assert len(list(fresh_cache.glob("sample-*.marshal"))) == 2
    for entry in fresh_cache.glob("sample-*.marshal"):
        entry.write_bytes(b"\x00 not marshal data")
    assert spec.derived("sample", compute, str(code)) == first and len(calls) == 3  # computed again, and rewritten
    assert spec.derived("sample", compute, str(code)) == first and len(calls) == 3


def test_a_spec_made_in_memory_computes_its_derived_values(fresh_cache) -> None:
    spec = spec_module.Spec(read_spec_document(default_spec_path()), default_spec_path())
    assert spec.derived("sample", lambda: (1,)) == (1,)
    assert not list(fresh_cache.glob("sample-*"))


def test_kinds_and_detection_shapes_from_the_cache_are_those_computed(fresh_cache, monkeypatch) -> None:
    from validator import detect

    computed = spec_module._load.__wrapped__(str(default_spec_path()))
    kinds, shapes = computed.kinds, detect.kind_shapes(computed)
    names = [p.name for p in fresh_cache.glob("*.marshal")]
    assert any(n.startswith("kinds-") for n in names) and any(n.startswith("detect-shapes-") for n in names)
    monkeypatch.setattr(spec_module.Spec, "_kind_rows", lambda _self: pytest.fail("the kinds were not read"))
    monkeypatch.setattr(detect, "_shape_rows", lambda _spec: pytest.fail("the shapes were not read"))
    remembered = spec_module._load.__wrapped__(str(default_spec_path()))
    assert remembered.kinds == kinds and list(remembered.kinds) == list(kinds)
    assert detect.kind_shapes(remembered) == shapes
