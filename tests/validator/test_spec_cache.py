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
