"""A37 in the gate: an unsafe TPP-Redirect-URI is refused by the reference sandbox and the gate agrees; a bank that
accepts it is not failed unless its profile states the rule (then it is held to the refusal)."""
from __future__ import annotations

from conformance.gate.runner import RunOptions, run
from conformance.gate.target import ReferenceServer
from gate_helpers import describe
from validator.context import Profile

CHECK = "semantic:redirect-target-unsafe"
ACCEPTS_ANY = Profile.from_mapping({"rules": {"redirect-target-unsafe": {"severity": "off"}}})


def _gate(server: ReferenceServer, tmp_path, profile: str | None = None):
    path = None
    if profile:
        path = tmp_path / "bank.yaml"
        path.write_text(profile)
    try:
        return run(RunOptions(server.start().url, ("semantic",), profile_path=str(path) if path else None,
                              max_examples=2, checks=(CHECK,)))
    finally:
        server.stop()


def _outcome(result):
    return next(o for o in result.outcomes if o.check == CHECK)


def test_the_sandbox_refuses_and_the_gate_agrees(tmp_path):
    result = _gate(ReferenceServer(), tmp_path)
    assert not result.findings, describe(result)
    assert _outcome(result).status == "passed" and _outcome(result).cases > 0
    stated = _gate(ReferenceServer(), tmp_path, "rules:\n  redirect-target-unsafe: {severity: error}\n")
    assert not stated.findings, describe(stated)


def test_a_bank_accepting_any_redirect_is_not_failed_unless_its_profile_says_it_refuses(tmp_path):
    lenient = _gate(ReferenceServer(profile=ACCEPTS_ANY), tmp_path)  # the default profile: either answer is right
    assert not lenient.findings, describe(lenient)
    assert _outcome(lenient).status == "passed"
    held = _gate(ReferenceServer(profile=ACCEPTS_ANY), tmp_path, "rules:\n  redirect-target-unsafe: {severity: error}\n")
    assert [f.rule for f in held.findings] and {f.rule for f in held.findings} == {"redirect-target-unsafe"}, \
        describe(held)
