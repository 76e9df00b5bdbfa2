"""Every limit reached, not a sample (issue 27, section 4): the gate's negative:boundaries check sends both sides of
every boundary the edge derivation lists, once per run whatever --max-examples says, and a sandbox whose limit of
any one field is moved by one (the parametrised limit-off-by-one switch) is caught by it, outwards (one beyond the
limit taken) and inwards (the limit itself refused), whatever the seed, with --max-examples 1.

The per-field cases run only the boundary of the switch's field (its operation's control and the two sides), in
process, against one reference sandbox whose switch is changed between cases: a whole gate run per field would cost
minutes."""
from __future__ import annotations

import pytest

from conformance.gate.model import SUITES
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities, Session
from conformance.gate.suites import boundaries as B
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from gate_helpers import describe
from validator.context import DEFAULT_PROFILE
from validator.spec import load_spec

SPEC = load_spec()


def _derived() -> list:
    """The boundaries the gate sends (derived without a target: a query is judged with placeholder test data)."""
    session = Session("http://127.0.0.1:9", SPEC, DEFAULT_PROFILE, Identities.throwaway())
    try:
        return B.boundaries(session)[1]
    finally:
        session.close()


BOUNDARIES = _derived()
LIMITS = [b for b in BOUNDARIES if b.keyword in F.LIMIT_KEYWORDS]
# the switch names of every field's limit, moved both ways
SWITCHES = [F.MovedLimit(b.operation, b.pointer, b.keyword, by).name for b in LIMITS for by in (+1, -1)]


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


@pytest.fixture(scope="module")
def server():
    started = ReferenceServer().start()
    yield started
    started.stop()


def test_the_boundaries_reach_every_field_the_examples_leave_out_too():
    """The gate's list is the edge derivation's, every sent kind has boundaries, and an optional field the spec's
    example leaves out (a standing order's debtorName, purposeCode, endToEndIdentification) is reached."""
    reached = {(b.kind or b.operation, b.pointer, b.keyword) for b in BOUNDARIES}
    assert {b.operation for b in BOUNDARIES} == {*B.OPERATIONS.values(), *B.QUERY_OPERATIONS}
    for field in [("periodic-payment", "/debtorName", "maxLength"), ("periodic-payment", "/purposeCode", "enum"),
                  ("periodic-payment", "/endToEndIdentification", "maxLength"),
                  ("sepa-credit-transfer", "/creditorName", "maxLength"),
                  ("sandbox-account-transactions", "/0/bankTransactionCode", "minLength"),
                  ("card-transactions", "/0/transactionAmount/amount", "maximum"),
                  ("bulk-payment", "/payments/0/creditorAccount/bban", "pattern"),
                  ("sepa-credit-transfer", "/requestedExecutionDate", "format"),
                  ("listSandboxCardTransactions", "/query/limit", "maximum"),
                  ("listSandboxAccountTransactions", "/query/offset", "minimum"),
                  ("listSandboxCardTransactions", "/query/bookingStatus", "enum")]:
        assert field in reached, field
    for b in BOUNDARIES:  # one field moved on the same valid request: the two sides differ at the pointer alone
        assert (b.outside.body, b.outside.query) != (b.inside.body, b.inside.query)
        assert b.outside.pointer == b.inside.pointer


def test_every_boundary_is_sent_once_whatever_max_examples(identities):
    server = ReferenceServer().start()
    try:
        result = run(RunOptions(server.url, SUITES, identities=identities, seed=5, max_examples=1,
                                checks=(B.CHECK_ID,)))
    finally:
        server.stop()
    assert not result.findings, describe(result)
    operations = {*B.OPERATIONS.values(), *B.QUERY_OPERATIONS}
    assert {o.operation for o in result.outcomes if o.status == "passed"} >= operations
    # a control per operation and both sides of each boundary (the accounts' paths ask the listing)
    sent = [case for case in result.cases if case[1] != "listSandboxCustomers"]
    assert len(sent) == len(operations) + 2 * len(BOUNDARIES)


@pytest.mark.parametrize("switch", SWITCHES, ids=lambda switch: switch.removeprefix(f"{F.LIMIT_OFF_BY_ONE}:"))
def test_a_limit_moved_by_one_is_caught(switch, server, identities):
    moved = F.MovedLimit.parse(switch)
    server.sandbox.faults = F.ActiveFaults.of((switch,))
    seed = SWITCHES.index(switch) * 7919  # a different seed per field: the boundaries do not depend on it
    session = Session(server.url, SPEC, DEFAULT_PROFILE, identities, seed=seed, max_examples=1)
    try:
        session.begin("negative", B.CHECK_ID)
        chosen = [b for b in B.boundaries(session)[1]
                  if (b.operation, b.pointer, b.keyword) == (moved.operation, moved.pointer, moved.keyword)]
        assert len(chosen) == 1
        B.send_boundaries(session, moved.operation, chosen)
    finally:
        session.close()
        server.sandbox.faults = F.NONE
    findings = [f for o in session.outcomes.values() for f in o.findings]
    side = "outside its limit" if (moved.by > 0) == moved.keyword.startswith("max") else "just inside its limit"
    # the boundary's own side; or, where the spec's example (every boundary's base) sits at the limit moved
    # inwards, the control's refusal naming the field
    caught = [f for f in findings if f.check == B.CHECK_ID and moved.pointer in f.message
              and (side in f.message or "valid control" in f.message)]
    assert caught, f"{switch} not caught: {[f.message for f in findings]}"


def test_a_moved_limit_switch_is_parsed_and_an_unknown_one_refused():
    moved = F.MovedLimit.parse("limit-off-by-one:createSepaCreditTransfer:/creditorName:maxLength+1")
    assert moved == F.MovedLimit("createSepaCreditTransfer", "/creditorName", "maxLength", 1)
    assert F.ActiveFaults.of((moved.name,)).moved_limits == (moved,)
    with pytest.raises(F.UnknownFault):
        F.ActiveFaults.of(("limit-off-by-one:createSepaCreditTransfer:/creditorName:pattern+1",))
