"""Kind detection remembers what the keys alone decide (issue 22): the near-miss comparison per key set, and the
answer of a payload that fits no kind exactly per key set and nested members. The answers are the same as
without the caches, for every kind, with each top-level property dropped or misspelt in turn (the cases of
tools/detection_accuracy.py), and the caches stay bounded."""
from __future__ import annotations

import difflib

import pytest

from validator import detect, suggest
from validator.detect import detect_kind, kind_shapes
from validator.rules.examples import spec_example
from validator.spec import Spec, load_spec
from tool_modules import load_tool

SPEC = load_spec()
SEPA = "createSepaCreditTransfer request rentToBerlin"
CACHES = ("detect_fit", "detect_key_scores", "detect_closest")


def _accuracy_tool():
    return load_tool("detection_accuracy")


def _cases() -> list:
    """(kind, example, change, payload) of every spec example of a kind, unchanged and one mistake away."""
    tool = _accuracy_tool()
    return [(kind, location, change, payload)
            for kind, location, value in tool.kind_examples(SPEC)
            for change, payload in [("unchanged", value), *tool.mutants(value)]]


CASES = _cases()


def _fresh() -> Spec:
    """The same spec document with nothing derived from it yet (no cache filled by another test)."""
    return Spec(SPEC.document, SPEC.path)


def _reference_scores(spec: Spec, payload) -> list:
    """Each kind's best score written plainly, every key compared anew (what detection did before the caches)."""
    out = []
    for entry in kind_shapes(spec):
        keys = detect._top_keys(payload, entry.array)
        if keys is None:
            continue
        best = None
        for shape in entry.shapes:
            matched = keys & shape.properties
            unmatched = set(shape.properties - matched)
            undeclared = []
            for key in sorted(keys - shape.properties):
                near = difflib.get_close_matches(key, sorted(unmatched), n=1, cutoff=suggest.NEAR_MISS)
                if near:
                    unmatched.discard(near[0])
                    matched = matched | {near[0]}
                else:
                    undeclared.append(key)
            missing = tuple(sorted(shape.required - matched)) + shape.nested_missing(detect._top_object(payload, entry.array))
            score = detect._Score(entry.kind.name, len(undeclared) + len(missing), len(matched), entry.kind.is_request,
                                  missing, tuple(undeclared))
            if best is None or score.order < best.order:
                best = score
        out.append(best)
    return out


def test_the_cases_cover_every_kind_and_change():
    assert {kind for kind, *_ in CASES} == set(SPEC.kinds)
    changes = {change.split(" ")[1] for _k, _l, change, _p in CASES if change != "unchanged"}
    assert changes == {"dropped", "misspelt"}
    assert len(CASES) > 1000


def test_detection_with_the_caches_equals_detection_without(monkeypatch):
    cached_spec = _fresh()
    cold = [detect_kind(cached_spec, payload) for *_, payload in CASES]  # each case as it fills the caches
    warm = [detect_kind(cached_spec, payload) for *_, payload in reversed(CASES)][::-1]  # answered from them
    assert all(cached_spec._cache.get(name) for name in CACHES)  # the no-fit path did remember
    monkeypatch.setattr(detect, "FIT_CACHE_SIZE", 0)  # nothing is kept: every answer computed anew
    uncached_spec = _fresh()
    uncached = [detect_kind(uncached_spec, payload) for *_, payload in CASES]
    assert not any(uncached_spec._cache.get(name) for name in CACHES)
    for (kind, location, change, _payload), without, first, again in zip(CASES, uncached, cold, warm):
        assert first == without, (kind, location, change)
        assert again == without, (kind, location, change)
    # The cases do exercise the scoring path: most dropped or misspelt properties leave no exact fit.
    assert sum(1 for d in uncached if not d.confident) > 50


def test_the_remembered_scores_equal_the_plain_comparison():
    spec = _fresh()
    for kind, location, change, payload in CASES + CASES:  # the second round from the cache
        assert detect._scores(spec, payload) == _reference_scores(spec, payload), (kind, location, change)


def test_one_near_miss_comparison_per_key_set(monkeypatch):
    calls = []

    def counting(word, choices, cutoff=suggest.NEAR_MISS):
        calls.append(word)
        return suggest.closest(word, choices, cutoff)

    monkeypatch.setattr(detect, "closest", counting)
    spec = _fresh()
    payloads = []
    for n in range(50):  # distinct payloads, one key set: creditorName missing
        payload = spec_example(spec, SEPA)
        payload["endToEndIdentification"] = f"E2E-{n}"
        del payload["creditorName"]
        payloads.append(payload)
    first = detect_kind(spec, payloads[0])
    once = len(calls)
    assert once > 0 and first.kind == "sepa-credit-transfer" and not first.confident
    assert all(detect_kind(spec, p) == first for p in payloads[1:])
    assert len(calls) == once
    # Another value one level down (an account without its iban) is another answer, with no new comparison.
    other = dict(payloads[0], creditorAccount={"currency": "EUR"})
    reference = detect_kind(_fresh(), other)
    before = len(calls)
    assert detect_kind(spec, other) == reference
    assert len(calls) == before


def test_a_nested_object_still_decides_on_the_no_fit_path():
    # One top-level key set, objects one level down with and without what a shape requires there: the remembered
    # answer is per nested signature, so each gets its own (as without the cache).
    spec = _fresh()
    with_links = {"_links": {"scaRedirect": {"href": "https://sca.bank.example.no/a"}}, "unknownMember": 1}
    without = {"_links": {"self": {"href": "/v1/x"}}, "unknownMember": 1}
    for _ in range(2):
        assert detect_kind(spec, with_links) == detect_kind(_fresh(), with_links)
        assert detect_kind(spec, without) == detect_kind(_fresh(), without)


def test_the_caches_stay_bounded():
    spec = _fresh()
    for n in range(detect.FIT_CACHE_SIZE + 50):  # key sets from the input: each distinct, none fits exactly
        detect_kind(spec, {f"unknown{n}": 1, "creditorName": "x"})
        detect_kind(spec, [{f"unknown{n}": 1}])
    for name in CACHES:
        assert 0 < len(spec._cache[name]) <= detect.FIT_CACHE_SIZE, name
    # Key sets too large to keep are answered all the same, as without the cache.
    wide = {f"member{n}": n for n in range(detect.FIT_CACHE_KEYS + 1)}
    assert detect_kind(spec, wide) == detect_kind(_fresh(), wide)
    assert frozenset(wide) not in spec._cache["detect_fit"]
    # ... and so are key sets of very long names, which no cache keeps (an input's text is not held).
    spec = _fresh()
    long_name = {"x" * (detect.FIT_CACHE_CHARACTERS + 1): 1, "creditorName": "x"}
    for _ in range(2):
        assert detect_kind(spec, long_name) == detect_kind(_fresh(), long_name)
    assert not any(spec._cache.get(name) for name in CACHES)
    assert detect_kind(spec, spec_example(spec, SEPA)).kind == "sepa-credit-transfer"  # still right once full


@pytest.mark.parametrize("given", [list, tuple, iter])  # choices come as any iterable
def test_a_declared_name_is_its_own_closest_without_a_fuzzy_match(monkeypatch, given):
    names = ["debtorName", "creditorName", "creditorAccount"]
    expected = difflib.get_close_matches("creditorName", names, n=1, cutoff=suggest.NEAR_MISS)

    def refuse(*_args, **_kwargs):
        raise AssertionError("difflib consulted for a name that is declared")

    monkeypatch.setattr(difflib, "get_close_matches", refuse)
    assert [suggest.closest("creditorName", given(names))] == expected == ["creditorName"]


def test_a_misspelt_name_still_gets_the_fuzzy_match():
    assert suggest.closest("creditorNme", ["creditorName", "debtorName"]) == "creditorName"
    assert suggest.closest("id", ["code"]) is None
    with pytest.raises(ValueError):  # an impossible cutoff is refused as difflib refuses it, name declared or not
        suggest.closest("code", ["code"], cutoff=1.5)
