"""Every fault switch breaks the behaviour it names, and only with the switch on: one scenario per switch, run on a
faithful sandbox (the scenario holds) and with the switch on (it does not). Responses the validator's response kinds
refuse are collected, not failed on: for some switches they are the evidence."""
from __future__ import annotations

import threading

import pytest
from conftest import in_days
from flows import BULK, EMPTY, SEPA, authorise, bulk_body, create, sca, sepa, sepa_body, start, status

from conformance.client import SignedClient
from conformance.sandbox import faults as F
from conformance.sandbox import testdata


def _code(r) -> str | None:
    body = r.json() if r.content else {}
    return body["tppMessages"][0]["code"] if "tppMessages" in body else body.get("code")


def basket_over_limit(env) -> bool:
    ids = [sepa(env.tpp, f"{i + 1}.00") for i in range(11)]
    return env.tpp.call("createSigningBasket", body={"paymentIds": ids}).status_code == 400


def basket_accepts_bulk(env) -> bool:
    bulk = create(env.tpp, "createBulkPayment", bulk_body("5"))
    r = env.tpp.call("createSigningBasket", body={"paymentIds": [sepa(env.tpp), bulk]})
    return r.status_code == 400 and _code(r) == "REFERENCE_MIX_INVALID"


def minor_units_ignored(env) -> bool:
    return env.tpp.call("createSepaCreditTransfer", body=sepa_body("100.001")).status_code == 400


def basket_best_case(env) -> bool:
    authorised, waiting = sepa(env.tpp, "1.00"), sepa(env.tpp, "2.00")
    authorise(env.tpp, env.browser, authorised, testdata.KARI)
    r = env.tpp.call("createSigningBasket", body={"paymentIds": [authorised, waiting]})
    return r.json()["transactionStatus"] == "RCVD"


def signature_not_verified(env) -> bool:
    prepared = env.tpp.prepare("createSepaCreditTransfer", body=sepa_body())
    prepared.headers = [(n, "3d9a8e42-7b1c-4c5e-9f2a-6b8d0e1f2a3d" if n == "PSU-ID" else v) for n, v in prepared.headers]
    return env.tpp.send_prepared(prepared).status_code == 401


def digest_not_checked(env) -> bool:
    prepared = env.tpp.prepare("createSepaCreditTransfer", body=sepa_body("10.00"))
    prepared.body = prepared.body.replace(b"10.00", b"99.00")
    return env.tpp.send_prepared(prepared).status_code == 400


def lack_of_funds_500(env) -> bool:
    pid = create(env.tpp, "createBulkPayment", bulk_body("100.00", debtor=EMPTY))
    authorise(env.tpp, env.browser, pid, testdata.INGRID, BULK)
    r = env.tpp.call("startPaymentAuthorisation", path={**BULK, "paymentId": pid})
    return r.status_code == 400 and _code(r) == "PAYMENT_FAILED"


def pdng_deletion_allowed(env) -> bool:
    pid = sepa(env.tpp)
    authorise(env.tpp, env.browser, pid, testdata.KARI)
    return env.tpp.call("deletePayment", path={**SEPA, "paymentId": pid}).status_code == 409


def pagination_off_by_one(env) -> bool:
    with env.sandbox.store.transaction() as tx:
        account = tx.account_by_reference(None, testdata.ACCOUNTS[0]["bban"])["id"]
    everything = env.tpp.call("listSandboxAccountTransactions", path={"mockAccountId": account}).json()
    page = env.tpp.call("listSandboxAccountTransactions", path={"mockAccountId": account},
                        query={"offset": "0", "limit": "1"}).json()
    return page == everything[:1]


def created_200(env) -> bool:
    return env.tpp.call("createSepaCreditTransfer", body=sepa_body()).status_code == 201


def transaction_status_missing(env) -> bool:
    return "transactionStatus" in status(env.tpp, sepa(env.tpp))


def past_execution_date_accepted(env) -> bool:
    r = env.tpp.call("createSepaCreditTransfer", body=sepa_body(date=in_days(env.sandbox, -1)))
    return r.status_code == 400 and _code(r) == "EXECUTION_DATE_INVALID"


def foreign_payment_readable(env) -> bool:
    pid = sepa(env.tpp)
    return env.other.call("getPaymentStatus", path={**SEPA, "paymentId": pid}).status_code == 404


def request_id_replay_duplicates(env) -> bool:
    headers = {"X-Request-ID": "5e0c7a1b-2d3f-4a5b-8c6d-7e8f9a0b1c2d"}
    first = env.tpp.call("createSepaCreditTransfer", body=sepa_body(), headers=headers)
    again = env.tpp.call("createSepaCreditTransfer", body=sepa_body(), headers=headers)
    with env.sandbox.store.transaction() as tx:
        stored = tx.payment_count()
    return stored == 1 and first.json() == again.json()


def write_lost_under_concurrency(env, clients: int = 16, each: int = 6) -> bool:
    ids: list[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        with SignedClient(env.server.url, env.identity, clock=env.sandbox.clock.now) as client:
            for i in range(each):
                r = client.call("createSepaCreditTransfer", body=sepa_body(f"{n + 1}.{i:02d}"))
                assert r.status_code == 201, r.text
                with lock:
                    ids.append(r.json()["paymentId"])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with env.sandbox.store.transaction() as tx:
        stored = tx.payment_count()
    return len(ids) == clients * each and len(set(ids)) == stored == len(ids)


def empty_name_refused(env) -> bool:
    body = {**sepa_body(), "creditorName": ""}
    return env.tpp.call("createSepaCreditTransfer", body=body, query={"allowLogicalDuplicate": "true"}).status_code == 201


def request_id_not_uuid_refused(env) -> bool:
    return env.tpp.call("createSepaCreditTransfer", body=sepa_body(), query={"allowLogicalDuplicate": "true"},
                        headers={"X-Request-ID": "order-2026-0001"}).status_code == 201


# ---- issue 17, section 5
def refusal_path_elsewhere(env) -> bool:
    body = sepa_body()
    body["creditorAccount"]["iban"] = "DE89370400440532013001"  # check digits broken
    r = env.tpp.call("createSepaCreditTransfer", body=body)
    return r.status_code == 400 and r.json()["tppMessages"][0]["path"].startswith("/creditorAccount")


def detail_other_payment(env) -> bool:
    first, second = sepa(env.tpp, "1.00"), sepa(env.tpp, "2.00")
    r = env.tpp.call("getPayment", path={**SEPA, "paymentId": first})
    return r.status_code == 200 and r.json()["instructedAmount"]["amount"] == "1.00"


def detail_amount_as_sent(env) -> bool:
    pid = create(env.tpp, "createBulkPayment", bulk_body(str(250)))  # no amount literal for Hypothesis to draw
    r = env.tpp.call("getPayment", path={**BULK, "paymentId": pid})
    return r.json()["payments"][0]["instructedAmount"]["amount"] == "250.00"


def cancellation_202_unknown_link(env) -> bool:
    pid = sepa(env.tpp)
    return (env.tpp.call("deletePayment", path={**SEPA, "paymentId": pid}).status_code == 204
            and status(env.tpp, pid)["transactionStatus"] == "CANC")


def unknown_id_readable(env) -> bool:
    sepa(env.tpp)
    r = env.tpp.call("getPaymentStatus", path={**SEPA, "paymentId": "enc!!bm9ib2R5LWlzc3VlZC10aGlz"})
    return r.status_code == 404 and _code(r) == "RESOURCE_UNKNOWN"


def status_link_unresolved(env) -> bool:
    r = env.tpp.call("createSepaCreditTransfer", body=sepa_body())
    return r.json()["_links"]["status"]["href"].endswith(r.json()["paymentId"] + "/status")


def signed_headers_partial(env) -> bool:
    from validator.signing import SignableRequest, sign_request

    prepared = env.tpp.prepare("createSepaCreditTransfer", body=sepa_body(), sign=False)
    assert "psu-id" in {n.lower() for n, _v in prepared.headers}, "PSU-ID must be present to be left unsigned"
    request = sign_request(SignableRequest(prepared.method, prepared.target, list(prepared.headers), prepared.body),
                           env.identity.key, env.identity.certificate, headers=["date", "digest", "x-request-id"],
                           date=env.sandbox.clock.now())
    prepared.headers = list(request.headers)
    r = env.tpp.send_prepared(prepared)
    return r.status_code == 401 and _code(r) == "SIGNATURE_INVALID"


def keyid_serial_not_checked(env) -> bool:
    """A keyId with another serial under the certificate's own issuer is refused."""
    import re

    certificate = env.identity.certificate
    prepared = env.tpp.prepare("createSepaCreditTransfer", body=sepa_body("11.00"))
    key_id = f"SN={certificate.serial_number + 1:X},CA={certificate.issuer.rfc4514_string()}"
    prepared.headers = [(n, re.sub(r'keyId="(?:[^"\\]|\\.)*"', lambda _m: f'keyId="{key_id}"', v)
                         if n == "Signature" else v) for n, v in prepared.headers]
    r = env.tpp.send_prepared(prepared)
    return r.status_code == 401 and _code(r) == "SIGNATURE_INVALID"


def error_body_undocumented(env) -> bool:
    body = sepa_body()
    body["instructedAmount"] = {"currency": "EUR", "amount": "1.001"}
    r = env.tpp.call("createSepaCreditTransfer", body=body)
    return r.status_code == 400 and _code(r) == "FORMAT_ERROR"


def sca_success_without_effect(env) -> bool:
    cancelled = sepa(env.tpp, "3.00")
    started = start(env.tpp, cancelled)
    env.tpp.call("deletePayment", path={**SEPA, "paymentId": cancelled})
    authorised = sepa(env.tpp, "4.00")
    first, second = start(env.tpp, authorised), start(env.tpp, authorised)
    sca(env.browser, first, testdata.KARI)
    return all("psu-id" not in sca(env.browser, s, testdata.KARI) for s in (started, second))


def empty_header_absent(env) -> bool:
    """A41: an optional header sent empty is refused as a value of the wrong format, not read as absent."""
    r = env.tpp.call("createSepaCreditTransfer", body=sepa_body(), headers={"PSU-Corporate-ID": ""})
    return r.status_code == 400 and _code(r) == "FORMAT_ERROR"


def unlisted_headers_ignored(env) -> bool:
    """A42: a status read (outside the header table) checks the format of its optional PSU-ID too."""
    r = env.tpp.call("getPaymentStatus", path={**SEPA, "paymentId": sepa(env.tpp)}, headers={"PSU-ID": "not-a-uuid"})
    return r.status_code == 400 and _code(r) == "FORMAT_ERROR"


def extra_collection_read(env) -> bool:
    """A method the endpoint table does not list (GET on the SEPA creation path) is no operation: not 200."""
    return env.tpp.send("GET", SEPA_PATH).status_code in (404, 405, 501)


def unknown_ids_first(env) -> bool:
    """The validator's order: a status read with a malformed header is refused for the header (400), whether or not
    its id was issued; the switch checks the id first (404)."""
    r = env.tpp.call("getPaymentStatus", path={**SEPA, "paymentId": "enc!!bm9ib2R5LWlzc3VlZC10aGlz"},
                     headers={"PSU-ID": "not-a-uuid"})
    return r.status_code == 400


SEPA_PATH = "/v1/payments/sepa-credit-transfers"


SCENARIOS = {
    F.EMPTY_HEADER_ABSENT: empty_header_absent,
    F.UNLISTED_HEADERS_IGNORED: unlisted_headers_ignored,
    F.EXTRA_COLLECTION_READ: extra_collection_read,
    F.UNKNOWN_IDS_FIRST: unknown_ids_first,
    F.EMPTY_NAME_REFUSED: empty_name_refused,
    F.REQUEST_ID_NOT_UUID_REFUSED: request_id_not_uuid_refused,
    F.BASKET_OVER_LIMIT: basket_over_limit,
    F.BASKET_ACCEPTS_BULK: basket_accepts_bulk,
    F.MINOR_UNITS_IGNORED: minor_units_ignored,
    F.BASKET_BEST_CASE: basket_best_case,
    F.SIGNATURE_NOT_VERIFIED: signature_not_verified,
    F.DIGEST_NOT_CHECKED: digest_not_checked,
    F.LACK_OF_FUNDS_500: lack_of_funds_500,
    F.PDNG_DELETION_ALLOWED: pdng_deletion_allowed,
    F.PAGINATION_OFF_BY_ONE: pagination_off_by_one,
    F.CREATED_200: created_200,
    F.STATUS_MISSING: transaction_status_missing,
    F.PAST_EXECUTION_DATE: past_execution_date_accepted,
    F.FOREIGN_PAYMENT_READABLE: foreign_payment_readable,
    F.REQUEST_ID_REPLAY_DUPLICATES: request_id_replay_duplicates,
    F.WRITE_LOST: write_lost_under_concurrency,
    F.REFUSAL_PATH_ELSEWHERE: refusal_path_elsewhere,
    F.DETAIL_OTHER_PAYMENT: detail_other_payment,
    F.DETAIL_AMOUNT_AS_SENT: detail_amount_as_sent,
    F.CANCELLATION_202_UNKNOWN_LINK: cancellation_202_unknown_link,
    F.UNKNOWN_ID_READABLE: unknown_id_readable,
    F.STATUS_LINK_UNRESOLVED: status_link_unresolved,
    F.SIGNED_HEADERS_PARTIAL: signed_headers_partial,
    F.KEYID_SERIAL_NOT_CHECKED: keyid_serial_not_checked,
    F.ERROR_BODY_UNDOCUMENTED: error_body_undocumented,
    F.SCA_SUCCESS_WITHOUT_EFFECT: sca_success_without_effect,
}
# Switches whose broken answers the validator's response kinds refuse by themselves.
CAUGHT_BY_RESPONSE_KINDS = {F.CREATED_200, F.STATUS_MISSING, F.LACK_OF_FUNDS_500, F.DETAIL_AMOUNT_AS_SENT,
                            F.ERROR_BODY_UNDOCUMENTED}


class Env:
    def __init__(self, server, sandbox, tpp, other, browser, identity) -> None:
        self.server, self.sandbox, self.tpp, self.other, self.browser, self.identity = (
            server, sandbox, tpp, other, browser, identity)


@pytest.fixture
def env(server, sandbox, tpp, other_tpp, browser, identities, checker):
    checker.strict = False
    return Env(server, sandbox, tpp, other_tpp, browser, identities["A"])


def test_registry_is_covered_and_documented():
    assert len(F.FAULTS) >= 14
    assert set(SCENARIOS) == set(F.FAULTS)
    for fault in F.FAULTS.values():
        assert fault.breaks and fault.bug and fault.where
    with pytest.raises(F.UnknownFault):
        F.ActiveFaults.of(["no-such-fault"])


@pytest.mark.parametrize("name", sorted(F.FAULTS))
def test_faithful_sandbox_holds(name, env, checker):
    assert SCENARIOS[name](env), f"{name}: the faithful sandbox breaks the scenario"
    assert checker.problems == []


@pytest.mark.parametrize("faults", [(name,) for name in sorted(F.FAULTS)], ids=sorted(F.FAULTS))
def test_fault_switch_breaks_its_behaviour(faults, env, checker):
    name = faults[0]
    assert not SCENARIOS[name](env), f"{name}: the switch changed nothing"
    if name in CAUGHT_BY_RESPONSE_KINDS:
        assert checker.problems, f"{name}: the validator's response kinds did not refuse the broken answer"


def test_each_switch_is_consulted_at_exactly_one_place():
    """style.md: a registry of toggles, each consulted at one place, not flags threaded through every function."""
    import re
    from pathlib import Path

    package = Path(F.__file__).parent
    sources = {p.name: p.read_text(encoding="utf-8") for p in package.glob("*.py") if p.name != "faults.py"}
    constants = {name: value for name, value in vars(F).items() if isinstance(value, str) and value in F.FAULTS}
    assert set(constants.values()) == set(F.FAULTS)
    for constant, name in constants.items():
        uses = [f for f, text in sources.items() for _ in re.finditer(rf"\bF\.{constant}\b", text)]
        expected = 0 if F.FAULTS[name].hides else 1
        assert len(uses) == expected, f"{name} consulted in {uses}"
        module = F.FAULTS[name].where.split(".")[0]
        assert uses == [] or uses == [f"{module}.py"], f"{name}: registry says {F.FAULTS[name].where}"
    filters = [f for f, text in sources.items() for _ in re.finditer(r"\.hidden_rules\b", text)]
    assert filters == ["app.py"]


def test_the_lack_of_funds_fault_says_when_the_500_comes():
    """Issue 29, item 13: the description names the moment (its authorisation started again after the batch run
    rejected it) and the nearly empty account of the fixed test data by its IBAN."""
    bug = F.FAULTS[F.LACK_OF_FUNDS_500].bug
    assert testdata.NEARLY_EMPTY["iban"] in bug and "authorisation again" in bug and "500" in bug
