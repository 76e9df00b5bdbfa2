"""Issue 21, point 6: the gate's stateful:sca-without-effect catches a target whose SCA says success where nothing was
authorised (fault switch sca-success-without-effect: a cancelled payment's authorisation, and the second of two,
finalise and redirect with psu-id) and passes on the faithful sandbox (A35). Against Prism: tests/conformance/
test_prism.py; with profile open-authorisations: one: tests/conformance/test_gate_profiles.py."""
from __future__ import annotations

import pytest

from conformance.gate.model import SUITES
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F

CHECK = "stateful:sca-without-effect"


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def against_reference(faults, identities):
    server = ReferenceServer(faults=faults).start()
    try:
        return run(RunOptions(server.url, SUITES, identities=identities, seed=0, max_examples=1, checks=(CHECK,)))
    finally:
        server.stop()


def test_the_faithful_sandbox_passes(identities):
    result = against_reference((), identities)
    assert not result.findings, [f.message for f in result.findings]
    assert {o.status for o in result.outcomes} == {"passed"}


def test_a_success_where_nothing_was_authorised_is_one_finding_group_seen_twice(identities):
    result = against_reference((F.SCA_SUCCESS_WITHOUT_EFFECT,), identities)
    findings = [f for f in result.findings if f.check == CHECK]
    assert len(findings) == 2 and len({f.fingerprint for f in findings}) == 1, [f.message for f in findings]
    cancelled, second = sorted(findings, key=lambda f: "cancelled" not in f.message)
    assert "cancelled after the authorisation started" in cancelled.message
    assert "already moved to PDNG" in second.message
    for f in findings:
        assert f.ref == "A35" and f.operation == "sca-page"
        assert "redirected with success (psu-id)" in f.message and "reads 'finalised'" in f.message
    assert not [o for o in result.outcomes if o.status == "error"]
