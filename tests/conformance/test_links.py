"""The walk over the spec's OpenAPI links (stateful:links, Schemathesis' state machine) against the reference
sandbox: clean when faithful, failing with a finding that names the link when a linked answer is broken, the same
cases for the same seed, and the links it followed in the clause coverage."""
from __future__ import annotations

import pytest

from conformance.gate import report
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.suites import links
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from validator.spec import load_spec

WALK = ("stateful:links",)
SCENARIOS = 3  # --max-examples: scenarios of the walk (each at most links.STEPS_PER_SCENARIO steps)


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def walk(faults=(), *, seed=0, identities=None, max_examples=SCENARIOS):
    server = ReferenceServer(faults=faults).start()
    try:
        return run(RunOptions(server.url, ("stateful",), identities=identities, seed=seed, max_examples=max_examples,
                              checks=WALK))
    finally:
        server.stop()


def test_spec_links_are_read_from_the_document():
    found = {link.label for link in links.spec_links(load_spec())}
    assert "createSepaCreditTransfer 201 -> getPaymentStatus" in found
    assert "createBulkPayment 201 -> createSigningBasket" in found
    assert "startPaymentAuthorisation 201 -> getPaymentAuthorisationStatus" in found
    assert len(found) >= 20


def test_links_document_replaces_the_body_a_link_names():
    document = links.links_document(load_spec().document)
    sepa = document["paths"]["/v1/payments/sepa-credit-transfers"]["post"]["responses"]["201"]["links"]
    assert sepa["createSigningBasket"]["x-schemathesis"] == {"merge_body": False}
    assert "x-schemathesis" not in sepa["getPaymentStatus"]


def test_walk_is_clean_against_the_reference_and_names_the_links_it_followed(identities):
    result = walk(identities=identities)
    assert not result.findings, [f"{f.operation} {f.rule}: {f.message}" for f in result.findings]
    assert {o.status for o in result.outcomes} == {"passed"}, [o.reason for o in result.outcomes]
    assert len(result.cases) <= SCENARIOS * links.STEPS_PER_SCENARIO
    followed = {o.operation for o in result.outcomes} - {"createSepaCreditTransfer", "createBulkPayment",
                                                         "createPeriodicPayment", "createSandboxCustomer"}
    assert followed, "the walk reached no linked operation"
    coverage = report.coverage(result)["links"]
    assert coverage["exercised"], "the coverage names no link"
    assert set(coverage["exercised"]) | set(coverage["not_exercised"]) == \
        {link.label for link in links.spec_links(load_spec())}
    assert all(coverage["not_exercised"].values())


def test_walk_without_the_check_says_why_no_link_was_followed():
    coverage = links.links_coverage(load_spec(), set(), ran=False)
    assert not coverage["exercised"]
    assert all("did not run" in why for why in coverage["not_exercised"].values())


def test_walk_fails_when_a_linked_answer_breaks_the_spec(identities):
    """transaction-status-missing: the status a created payment links to lacks transactionStatus (A3)."""
    result = walk((F.STATUS_MISSING,), identities=identities)
    found = [f for f in result.findings if f.operation == "getPaymentStatus"]
    assert found, [f"{f.operation} {f.rule}: {f.message}" for f in result.findings]
    finding = found[0]
    assert finding.check == "stateful:links" and finding.rule == "schema-required"
    assert "transactionStatus" in finding.message and "-> getPaymentStatus" in finding.message
    assert finding.curl.startswith("curl") and "Signature: keyId=" in finding.curl


def test_walk_fails_when_a_creation_answers_200(identities):
    result = walk((F.CREATED_200,), identities=identities, max_examples=1)
    assert any(f.rule == "positive-data-acceptance" and f.operation.startswith("create") and f.actual == "200"
               for f in result.findings), [f"{f.operation} {f.rule}: {f.actual}" for f in result.findings]


def test_walk_same_seed_same_cases(identities):
    first, second = walk(seed=5, identities=identities), walk(seed=5, identities=identities)
    assert first.cases and first.cases_digest == second.cases_digest
    assert report.coverage(first)["links"] == report.coverage(second)["links"]
    other = walk(seed=6, identities=identities)
    assert other.cases_digest != first.cases_digest, "another seed walks otherwise"
