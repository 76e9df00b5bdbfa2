"""The compiled engine's errors (the fast error path) give the same findings as python-jsonschema's."""
from __future__ import annotations

import datetime as dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.generate import covered_kinds, valid_payloads
from validator.findings import walk_json
from validator.schema import _one_problem_per_value, checker_for
from validator.spec import load_spec

SPEC = load_spec()
TODAY = dt.date.fromisoformat(SPEC.example_today)
KINDS = sorted(k for k in covered_kinds() if k in SPEC.kinds and k != "payment-detail")  # anyOf root: python path anyway
junk = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=80) | st.lists(st.integers(), max_size=2) | st.just({})


def python_issues(checker, payload):
    issues = [i for e in checker._detail.iter_errors(payload) for i in checker._convert(e)]
    return sorted((i.rule, i.pointer, i.message) for i in _one_problem_per_value(issues))


def _paths(node):
    return (tokens for tokens, _ in walk_json(node))


def _break(data, payload, rounds: int, *, may_delete: bool) -> None:
    """Up to ``rounds`` values of ``payload`` replaced by junk (or, with ``may_delete``, object members removed)."""
    for _ in range(rounds):
        paths = [p for p in _paths(payload) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = payload
        for token in path[:-1]:
            parent = parent[token]
        if may_delete and data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(junk)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_compiled_error_path_matches_python_jsonschema(data, kind):
    payload = data.draw(valid_payloads(kind, today=TODAY))
    _break(data, payload, data.draw(st.integers(1, 3)), may_delete=True)
    checker = checker_for(SPEC, SPEC.kind(kind).schema_name)
    fast = sorted((i.rule, i.pointer, i.message) for i in checker.detailed_issues(payload))
    assert fast == python_issues(checker, payload)


def _listed(checker, payload, limit, compiled_only=False):
    """What the checker answers from the compiled engine's list of errors (without the one-missing-member answer)."""
    own, checker._own_required = checker._own_required, None
    try:
        return checker._issues(payload, limit, compiled_only)
    finally:
        checker._own_required = own


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_one_required_member_missing_is_answered_as_the_list_of_errors_answers(data, kind):
    """A root's own required member missing is answered without listing the compiled engine's errors when it is all
    that engine finds: the same issues, order and counts as from the list, whatever else is missing or wrong."""
    payload = data.draw(valid_payloads(kind, today=TODAY))
    checker = checker_for(SPEC, SPEC.kind(kind).schema_name)
    if isinstance(payload, dict) and checker._own_required is not None:
        names = [n for n in checker._own_required[1] if n in payload]
        for name in data.draw(st.lists(st.sampled_from(names), max_size=2, unique=True)) if names else ():
            del payload[name]
    _break(data, payload, data.draw(st.integers(0, 2)), may_delete=False)
    for limit in (None, 1, 1000):
        assert checker._issues(payload, limit) == _listed(checker, payload, limit)
        assert checker._issues(payload, limit, True) == _listed(checker, payload, limit, True)


def test_each_root_required_member_missing_from_the_spec_examples_is_answered_without_the_list():
    from tool_modules import load_tool

    answered = 0
    for kind, _location, example in load_tool("detection_accuracy").kind_examples(SPEC):
        checker = checker_for(SPEC, SPEC.kind(kind).schema_name)
        if not isinstance(example, dict) or checker._own_required is None:
            continue
        for name in checker._own_required[1]:
            payload = {k: v for k, v in example.items() if k != name}
            if name not in example:
                continue
            answered += checker._one_member_missing(payload) is not None
            assert checker._issues(payload, 1000) == _listed(checker, payload, 1000)
    assert answered > 20
