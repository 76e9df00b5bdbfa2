"""Issue 17 §1 (lifecycle side): every point the document leaves open is the implementer's to state. For each profile
key, the reference sandbox served with the other choice and the gate run (targeted checks, one example) with the same
profile: no finding; with the default profile: one finding group, naming the decision. (A32, the target's own test
data: test_gate_test_data.py.)"""
from __future__ import annotations

import pytest
import yaml

from conformance.gate import report
from conformance.gate.model import ABSENT_IN_PROFILE, NOT_OFFERED
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from validator.context import Profile

PERIODIC = "periodic-payments/norwegian-domestic-credit-transfers"


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(url: str, checks: tuple[str, ...], identities: Identities, profile_file=None, seed: int = 0):
    return run(RunOptions(url, ("semantic", "stateful"), profile_path=str(profile_file) if profile_file else None,
                          identities=identities, seed=seed, max_examples=1, checks=checks))


def describe(result) -> str:
    return "\n".join(f"{f.check} [{f.operation}] {f.rule} ({f.ref}): {f.message} (expected {f.expected}, actual "
                     f"{f.actual})" for f in result.findings) or "(no findings)"


def not_exercised(result) -> dict[str, str]:
    return {o.check: o.reason for o in result.outcomes if o.status == "not-exercised"}


# (profile, the checks that judge by it, the decision the default profile's finding names, why a check may be left)
CHOICES = [
    pytest.param({"request-id-replay": "new-request"}, ("stateful:request-id-replay",), "A29", None,
                 id="A29-new-request"),
    pytest.param({"request-id-replay": "conflict"}, ("stateful:request-id-replay",), "A29", None, id="A29-conflict"),
    pytest.param({"products-not-offered": [PERIODIC]}, ("stateful:products-offered", "stateful:basket-reference-mix"),
                 "A31", None, id="A31-periodic-not-offered"),
    pytest.param({"absent-operations": ["runSandboxBatch"]}, ("stateful:lifecycle", "stateful:cancellation"), "A25",
                 ABSENT_IN_PROFILE, id="A25-no-batch-run-operation"),
    pytest.param({"payment-baskets": "one"}, ("stateful:basket-membership",), "A34", None, id="A34-one-basket"),
    pytest.param({"open-authorisations": "one"}, ("stateful:sca-without-effect",), "A35", None,
                 id="A35-one-open-authorisation"),
    pytest.param({"logical-duplicates": "allowed"}, ("stateful:logical-duplicate",), "A30", None,
                 id="A30-duplicates-allowed"),
    pytest.param({"lack-of-funds": "at-batch-run"}, ("stateful:lack-of-funds",), "A24", None,
                 id="A24-lack-of-funds-at-the-batch-run"),
]
# The profile line each choice's difference names (issue 27: the line that would state the target's choice).
LINES = {"products-not-offered": lambda v: f"products-not-offered: [{v[0]}]",
         "absent-operations": lambda v: f"absent-operations: [{v[0]}]"}


def test_a_target_wanting_exact_minor_units_is_sent_them_by_every_fixture(identities, tmp_path):
    """A9 with amount-digits: exact: the realistic requests the checks start from, the scenarios' payments and the
    read-back's amounts carry every minor-unit digit, so nothing is refused for the gate's own fixtures."""
    profile_file = tmp_path / "exact.yaml"
    profile_file.write_text(yaml.safe_dump({"name": "exact digits", "amount-digits": "exact"}), encoding="utf-8")
    checks = ("semantic:amount-minor-units", "semantic:header-format", "stateful:read-back",
              "stateful:basket-reference-mix", "stateful:products-offered")
    server = ReferenceServer(profile=Profile.load(profile_file)).start()
    try:
        stated = gate(server.url, checks, identities, profile_file, seed=3)
    finally:
        server.stop()
    assert not stated.findings, describe(stated)
    assert not not_exercised(stated), not_exercised(stated)


@pytest.mark.parametrize("choice, checks, decision, left", CHOICES)
def test_the_other_choice_passes_with_its_profile_and_is_one_finding_group_without(choice, checks, decision, left,
                                                                                   identities, tmp_path):
    profile_file = tmp_path / "bank.yaml"
    profile_file.write_text(yaml.safe_dump({"name": "the other choice", **choice}), encoding="utf-8")
    server = ReferenceServer(profile=Profile.load(profile_file)).start()
    pinned_file = tmp_path / "pinned.yaml"
    pinned_file.write_text(yaml.safe_dump({"name": "ours pinned", "pinned-decisions": [decision]}), encoding="utf-8")
    try:
        stated = gate(server.url, checks, identities, profile_file, seed=1)
        default = gate(server.url, checks, identities, seed=2)
        pinned = gate(server.url, checks, identities, pinned_file, seed=3)
    finally:
        server.stop()
    assert not stated.findings, describe(stated)
    assert not [o for o in stated.outcomes if o.status == "error"], [o.reason for o in stated.outcomes]
    skipped = not_exercised(stated)
    assert all(left and why.startswith(left + ": ") for why in skipped.values()), skipped
    # without a profile: another reading of an open point -- one difference naming the decision and the profile line
    groups = report.groups(default)
    assert [g.tier for g in groups] == ["difference"], describe(default)
    (key, value), = choice.items()
    assert groups[0].finding.decision == decision, describe(default)
    assert groups[0].finding.profile_line == LINES.get(key, lambda v: f"{key}: {v}")(value), describe(default)
    assert report.summary(default)["failures"] == 0
    # with our decision pinned: a failure
    assert [g for g in report.groups(pinned) if g.tier == "failure"], describe(pinned)


def test_a_product_not_offered_is_403_and_an_unknown_one_404(identities, tmp_path):
    """A31 beside A7: the not-offered product's operations answer 403 PRODUCT_INVALID, a product the interface does
    not know 404 PRODUCT_UNKNOWN; the other checks of the product are not exercised, "not offered"."""
    profile_file = tmp_path / "no-periodic.yaml"
    profile_file.write_text(yaml.safe_dump({"products-not-offered": [PERIODIC]}), encoding="utf-8")
    profile = Profile.load(profile_file)
    server = ReferenceServer(profile=profile).start()
    try:
        from conformance.client import SignedClient

        with SignedClient(server.url, identities.tpp) as tpp:
            path = {"payment-service": "periodic-payments", "payment-product": "norwegian-domestic-credit-transfers",
                    "paymentId": "enc!!bm9uZQ"}
            refused = tpp.call("getPaymentStatus", path=path)
            unknown = tpp.call("getPaymentStatus", path={**path, "payment-product": "instant-credit-transfers"})
        result = run(RunOptions(server.url, ("schema",), profile_path=str(profile_file), identities=identities,
                                max_examples=1, checks=("schema:generated-requests",)))
    finally:
        server.stop()
    assert (refused.status_code, refused.json()["tppMessages"][0]["code"]) == (403, "PRODUCT_INVALID")
    assert (unknown.status_code, unknown.json()["tppMessages"][0]["code"]) == (404, "PRODUCT_UNKNOWN")
    assert not result.findings, describe(result)
    periodic = [o for o in result.outcomes if o.operation == "createPeriodicPayment"]
    assert [(o.status, o.reason) for o in periodic] == [("not-exercised", f"{NOT_OFFERED}: {PERIODIC}")]


def test_an_operation_absent_in_the_profile_is_404_and_not_exercised(identities, tmp_path):
    profile_file = tmp_path / "no-customer-deletion.yaml"
    profile_file.write_text(yaml.safe_dump({"absent-operations": ["deleteSandboxCustomer", "runSandboxBatch"]}),
                            encoding="utf-8")
    server = ReferenceServer(profile=Profile.load(profile_file)).start()
    try:
        from conformance.client import SignedClient

        with SignedClient(server.url, identities.tpp) as tpp:
            batch = tpp.call("runSandboxBatch", body=None)
            deleted = tpp.call("deleteSandboxCustomer", path={"customerId": "enc!!Q1VTVC0xMzAzOTMxOTk1NQ"})
    finally:
        server.stop()
    assert (batch.status_code, deleted.status_code) == (404, 404)
    assert batch.json()["tppMessages"][0]["code"] == "RESOURCE_UNKNOWN"


# ---------------------------------------------------------------- the profile keys themselves
def test_the_profile_keys_are_checked_and_read():
    from validator.context import ConfigError

    profile = Profile.from_mapping({"request-id-replay": "conflict", "products-not-offered": [PERIODIC],
                                    "absent-operations": ["runSandboxBatch"], "payment-baskets": "one"})
    assert (profile.request_id_replay, profile.products_not_offered, profile.absent_operations,
            profile.payment_baskets) == ("conflict", (PERIODIC,), frozenset({"runSandboxBatch"}), "one")
    # a product the interface does not have may be named too: known to the implementation, not offered (403)
    assert Profile.from_mapping({"products-not-offered": ["payments/instant-sepa-credit-transfers"]}) \
        .products_not_offered == ("payments/instant-sepa-credit-transfers",)
    defaults = Profile()
    assert (defaults.request_id_replay, defaults.products_not_offered, defaults.absent_operations,
            defaults.payment_baskets) == ("first-response", (), frozenset(), "several")
    for bad, said in (({"absent-operations": ["createSepaCreditTransfer"]}, "operation the document does not list"),
                      ({"products-not-offered": ["instant"]}, "payment product"),
                      ({"pinned-decisions": ["A99"]}, "pinned-decisions"),
                      ({"request-id-replay": "ignored"}, "request-id-replay"),
                      ({"payment-baskets": "two"}, "payment-baskets")):
        with pytest.raises(ConfigError, match=said):
            Profile.from_mapping(bad)


def test_the_oracle_knows_absent_operations_and_products_not_offered():
    """What the validator predicts (and the sandbox answers): an absent operation's path is unknown (404), or another
    method's where an operation shares the path (405); a product not offered 403 PRODUCT_INVALID."""
    from validator import Validator
    from validator.request.examples import materialize_example

    def findings(profile: dict, operation: str) -> list[tuple[str, int | None, str | None]]:
        from validator.spec import load_spec

        v = Validator(profile=Profile.from_mapping(profile), today=load_spec().example_today)  # the recipes' day
        request = materialize_example({"x-example": {"operation": operation}}, v.spec)
        return [(f.rule, f.status, f.code) for f in v.validate(request, "request").errors]

    assert findings({}, "runSandboxBatch") == []
    assert findings({"absent-operations": ["runSandboxBatch"]}, "runSandboxBatch") == [
        ("path-unknown", 404, "RESOURCE_UNKNOWN")]
    assert [f[0] for f in findings({"absent-operations": ["createSandboxCustomer"]}, "createSandboxCustomer")] == [
        "method-not-allowed"]
    assert findings({"products-not-offered": [PERIODIC]}, "createPeriodicPayment") == [
        ("product-not-offered", 403, "PRODUCT_INVALID")]
    assert findings({"products-not-offered": [PERIODIC]}, "createSepaCreditTransfer") == []


def test_serve_refuses_an_unusable_test_data_file(tmp_path):
    from click.testing import CliRunner

    from conformance.sandbox.cli import sandbox

    bad = tmp_path / "bad.json"
    bad.write_text('{"customers": []}', encoding="utf-8")
    result = CliRunner().invoke(sandbox, ["serve", "--db", ":memory:", "--test-data", str(bad)])
    assert result.exit_code == 2 and "customers and accounts" in result.output
