"""One cause, one finding (issue 27, section 6), against the reference sandbox with a fault switch: scenario checks
file what they see under a rule id (conformance/gate/rules.py or the validator's catalogue), so one answer seen by
two checks is one finding naming both; an answer that should have been a refusal is one finding, what is wrong with
its body said in it; the run's one A6 finding lists the refusals it stands for; coverage says what the run reached
(periodic payments mutated, the response kinds judged), a scenario stopped at a failed step says "not exercised",
and the unsigned request's refusal is judged for its path too."""
from __future__ import annotations

import pytest

from conformance.exchange.origins import OffTarget, Origins
from conformance.exchange.responses import ERROR_BODY_RULE
from conformance.gate import report
from conformance.gate.model import REGISTRY, STOPPED_EARLY, SUITES
from conformance.gate.rules import SCENARIO_RULES
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from gate_helpers import describe
from validator.rules import catalogue


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(faults, checks, identities):
    server = ReferenceServer(faults=faults).start()
    try:
        return run(RunOptions(server.url, SUITES, identities=identities, seed=0, max_examples=1, checks=checks))
    finally:
        server.stop()


def _no_check_ids_as_rules(result) -> None:
    known = set(catalogue()) | set(SCENARIO_RULES)
    as_check = [f for f in result.findings if f.rule in REGISTRY]
    assert not as_check, describe(result)
    scenario = [f for f in result.findings if f.suite in ("stateful", "security") and f.rule not in known
                and not f.rule.startswith("link-") and f.rule not in ("sca-page", "sca-redirect", ERROR_BODY_RULE)]
    assert not scenario, describe(result)


def test_one_read_seen_by_the_read_back_and_the_concurrent_creations_is_one_finding(identities):
    result = gate((F.DETAIL_OTHER_PAYMENT,), ("stateful:read-back", "stateful:concurrent-creations"), identities)
    found = report.groups(result)
    reads = [g for g in found if g.finding.operation == "getPayment"]
    assert len(reads) == 1, describe(result)
    assert reads[0].finding.rule == "payment-read-back"
    assert reads[0].checks == ["stateful:concurrent-creations", "stateful:read-back"]
    _no_check_ids_as_rules(result)


def test_an_unknown_ids_200_is_one_finding_whichever_check_reads_it_and_its_links_are_in_it(identities):
    result = gate((F.UNKNOWN_ID_READABLE,), ("stateful:unknown-ids", "stateful:products-offered"), identities)
    status = [g for g in report.groups(result) if g.finding.operation == "getPaymentStatus"]
    assert len(status) == 1, describe(result)
    assert status[0].finding.rule == "resource-unknown" and status[0].finding.actual == "200"
    assert set(status[0].checks) == {"stateful:unknown-ids", "stateful:products-offered"}
    # the answer's links name the payment it fell back to: said in the one finding, not a finding of their own
    assert not [f for f in result.findings if f.rule.startswith("link-")], describe(result)
    assert any("its body, which should not be there" in f.message and "names paymentId" in f.message
               for f in status[0].occurrences), describe(result)
    _no_check_ids_as_rules(result)


def test_the_unsigned_requests_refusal_is_judged_for_its_path(identities):
    result = gate((F.REFUSAL_PATH_ELSEWHERE,), ("security:unsigned",), identities)
    [finding] = result.findings
    assert finding.actual.startswith("401") and "naming where the request is wrong" in finding.expected
    assert "'/creditorName'" in finding.message and finding.refused_for == "path '/creditorName'"


def test_the_a6_finding_lists_the_refusals_it_stands_for(identities):
    result = gate((F.ERROR_BODY_UNDOCUMENTED,), ("security:unsigned", "security:tampered-body"), identities)
    [a6] = [f for f in result.findings if f.rule == ERROR_BODY_RULE]
    assert len(a6.refusals) == 2 and {r.split(":")[0] for r in a6.refusals} == \
        {"createSepaCreditTransfer 401", "createSepaCreditTransfer 400"}, a6.refusals
    assert f"refusals ({len(a6.refusals)} listed): {' | '.join(a6.refusals)}" in report.text(result)


def test_coverage_says_what_the_run_reached(identities):
    result = gate((), ("semantic:months-of-execution-duplicate", "semantic:header-required"), identities)
    assert not result.findings, describe(result)
    coverage = report.coverage(result)
    # the periodic payment's rules are mutated on createPeriodicPayment
    assert "months-of-execution-duplicate" in coverage["rules"]["exercised"]
    assert any(o.operation == "createPeriodicPayment" and o.status == "passed" for o in result.outcomes)
    # the bulk operation's refusals were judged as its error body: the rule and the section were reached
    assert "error-status-code" in coverage["rules"]["exercised"]
    assert "Errors › Responses of the bulk payment operation" in coverage["sections"]["exercised"]
    # every tppMessages error body judged against its schema: its code against the code set, its array's bounds
    assert "schema-items" in coverage["rules"]["exercised"]
    assert any(s.startswith("Errors › Message code set") for s in coverage["sections"]["exercised"])


def test_a_scenario_stopped_at_a_failed_step_says_not_exercised(identities, monkeypatch):
    """The SCA link leading off the target: the lack-of-funds scenario cannot go on; what it did not judge (RJCT,
    fundsAvailable, PAYMENT_FAILED) is "not exercised", saying where it stopped."""
    follow = Origins.follow

    def off_target_sca(self, href, base, where):
        if "scaRedirect" in where:
            raise OffTarget("https://sca.elsewhere.example/page", where, self.origins)
        return follow(self, href, base, where)

    monkeypatch.setattr(Origins, "follow", off_target_sca)
    result = gate((), ("stateful:lack-of-funds",), identities)
    assert [f.rule for f in result.findings] == ["link-off-target"], describe(result)
    stopped = [o for o in result.outcomes if o.status == "not-exercised"]
    assert [o.reason.split(":")[0] for o in stopped] == [STOPPED_EARLY], [(o.operation, o.reason) for o in stopped]
    assert "scaRedirect" in stopped[0].reason
