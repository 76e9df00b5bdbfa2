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


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_compiled_error_path_matches_python_jsonschema(data, kind):
    payload = data.draw(valid_payloads(kind, today=TODAY))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(payload) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = payload
        for token in path[:-1]:
            parent = parent[token]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(junk)
    checker = checker_for(SPEC, SPEC.kind(kind).schema_name)
    fast = sorted((i.rule, i.pointer, i.message) for i in checker.detailed_issues(payload))
    assert fast == python_issues(checker, payload)
