"""A shared sandbox keeps TPPs apart (issue 21, point 9): a TPP's reset touches its own state and the test data no
other TPP depends on (A38); a TPP is its certificate's identifier together with its key, or the identifier alone
under a CA the sandbox trusts (A39)."""
from __future__ import annotations

import datetime as _dt
import sqlite3

from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from conformance.client import Identity, SignedClient
from conformance.sandbox import Sandbox, testdata
from conformance.sandbox.cli import sandbox as sandbox_command
from conformance.sandbox.clock import Clock
from conformance.sandbox.storage import Store
from conftest import START
from flows import EUR, KARI_NOK, SEPA, authorise, batch, bulk_body, create, sepa, sepa_body, start, status

OLA = next(a for a in testdata.ACCOUNTS if a["customerNumber"] != KARI_NOK["customerNumber"]
           and a is not testdata.NEARLY_EMPTY and a["currency"] == "NOK")
REPLAYED = "0c0ffee0-1111-4222-8333-944445555666"
BULK = {"payment-service": "bulk-payments", "payment-product": "norwegian-domestic-credit-transfers"}


def _client(server, sandbox, checker, identity) -> SignedClient:
    return SignedClient(server.url, identity, clock=sandbox.clock.now, event_hooks={"response": [checker]})


def _initialize(client) -> None:
    r = client.call("initializeSandbox")
    assert r.status_code == 204, r.text


def _basket(client, pid: str) -> str:
    r = client.call("createSigningBasket", body={"paymentIds": [pid]})
    assert r.status_code == 201, r.text
    return r.json()["basketId"]


def _own_state(client, pid: str, basket: str, authorisation: str) -> tuple:
    payment = client.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    held = client.call("getSigningBasketStatus", path={"basketId": basket})
    sca = client.call("getPaymentAuthorisationStatus", path={**SEPA, "paymentId": pid, "authorisationId": authorisation})
    return payment.status_code, held.status_code, sca.status_code


def _balance(sandbox: Sandbox, account: dict) -> int:
    with sandbox.store.snapshot() as tx:
        return tx.account_by_reference(account.get("iban"), account.get("bban"))["balance"]


def _transactions(sandbox: Sandbox, account: dict) -> int:
    with sandbox.store.snapshot() as tx:
        row = tx.account_by_reference(account.get("iban"), account.get("bban"))
        return len(tx.account_transactions(row["id"], None, None))


# ---------------------------------------------------------------- A38: a reset touches the caller's own state
def test_a_reset_erases_no_other_tpp_s_payments_baskets_or_authorisations(tpp, other_tpp):
    theirs = []
    for i in range(5):
        pid = sepa(other_tpp, f"{11 + i}.00")
        theirs.append((pid, _basket(other_tpp, pid), start(other_tpp, pid)["authorisationId"]))
    mine = sepa(tpp, "5.00")
    my_basket, my_authorisation = _basket(tpp, mine), start(tpp, mine)["authorisationId"]
    for _ in range(10):  # the issue's 50 resets, shortened: each one of TPP A's
        _initialize(tpp)
    for pid, basket, authorisation in theirs:
        assert _own_state(other_tpp, pid, basket, authorisation) == (200, 200, 200)
        assert status(other_tpp, pid)["transactionStatus"] == "RCVD"
    assert _own_state(tpp, mine, my_basket, my_authorisation) == (404, 404, 404)  # the caller's own are gone


def test_a_reset_keeps_the_other_tpp_s_request_log_and_issues_no_id_twice(tpp, other_tpp):
    first = sepa(tpp, "7.00")
    theirs = other_tpp.call("createSepaCreditTransfer", body=sepa_body("8.00"),
                            query={"allowLogicalDuplicate": "true"}, headers={"X-Request-ID": REPLAYED})
    assert theirs.status_code == 201
    _initialize(tpp)
    again = sepa(tpp, "7.00")
    assert again != first
    replay = other_tpp.call("createSepaCreditTransfer", body=sepa_body("8.00"),
                            query={"allowLogicalDuplicate": "true"}, headers={"X-Request-ID": REPLAYED})
    assert replay.status_code == 201 and replay.json()["paymentId"] == theirs.json()["paymentId"]  # A29 still


def test_a_reset_restores_the_test_data_nobody_else_depends_on(sandbox, tpp, other_tpp, browser):
    fixed_ola, fixed_eur = _balance(sandbox, OLA), _balance(sandbox, EUR)
    # TPP A drains Ola's account (executed, booked) and creates a customer of its own
    pid = create(tpp, "createBulkPayment", bulk_body("100.00", debtor=OLA, creditor="12345678903"))  # outside
    assert "psu-id" in authorise(tpp, browser, pid, OLA["customerNumber"], BULK)
    assert pid in batch(tpp)["executed"]
    assert _balance(sandbox, OLA) < fixed_ola and _transactions(sandbox, OLA) > 0
    mine = tpp.call("createSandboxCustomer", body={"customerNumber": "31129956715", "type": "private",
                                                   "name": "Testkunde A"})
    assert mine.status_code == 201, mine.text
    # TPP B pays from Kari's EUR account (executed: booked there) and creates a customer of its own
    theirs = sepa(other_tpp, "20.00")
    assert "psu-id" in authorise(other_tpp, browser, theirs, EUR["customerNumber"])
    assert theirs in batch(other_tpp)["executed"]
    eur_after_b, eur_bookings = _balance(sandbox, EUR), _transactions(sandbox, EUR)
    assert eur_after_b < fixed_eur
    b_customer = other_tpp.call("createSandboxCustomer", body={"customerNumber": "01010112345", "type": "private",
                                                               "name": "Testkunde B"})
    assert b_customer.status_code == 201, b_customer.text

    _initialize(tpp)

    with sandbox.store.snapshot() as tx:
        numbers = {c["customerNumber"] for c in tx.customers()}
    assert "31129956715" not in numbers and "01010112345" in numbers  # A's own gone, B's kept
    assert _balance(sandbox, OLA) == fixed_ola  # restored: nobody else depends on it
    assert _transactions(sandbox, OLA) == len(testdata.DEFAULT.account_transactions.get(OLA.get("bban"), ()))
    assert _balance(sandbox, EUR) == eur_after_b and _transactions(sandbox, EUR) == eur_bookings  # B's payment's
    assert status(other_tpp, theirs)["transactionStatus"] == "ACSC"


def test_alone_in_the_sandbox_a_reset_replaces_everything(sandbox, tpp):
    fixed = _balance(sandbox, EUR)
    pid = sepa(tpp, "1.00")
    tpp.call("createSandboxCustomer", body={"customerNumber": "31129956715", "type": "private", "name": "Solo"})
    _initialize(tpp)
    assert tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid}).status_code == 404
    with sandbox.store.snapshot() as tx:
        assert [c["customerNumber"] for c in tx.customers()] == [c["customerNumber"] for c in testdata.DEFAULT.customers]
    assert _balance(sandbox, EUR) == fixed


def test_a_database_from_before_owners_is_opened_and_given_them(tmp_path):
    db = str(tmp_path / "old.db")
    Sandbox.create(db).store.close()
    with sqlite3.connect(db) as conn:  # as a database made before the owner column
        for table in ("customers", "accounts", "card_accounts"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN owner")
    store = Store(db)
    try:
        with store.transaction() as tx:
            assert tx.data_rows("customers") and all(r["owner"] is None for r in tx.data_rows("accounts"))
    finally:
        store.close()


# ---------------------------------------------------------------- A39: who the TPP is
def test_the_same_identifier_with_another_key_is_another_tpp(server, sandbox, checker, tpp, identities):
    pid = sepa(tpp, "42.00")
    impostor = Identity.generate(identities["A"].certificate.subject.get_attributes_for_oid(
        NameOID.ORGANIZATION_IDENTIFIER)[0].value)  # TPP A's organizationIdentifier on a fresh self-signed key
    with _client(server, sandbox, checker, impostor) as other:
        where = {**SEPA, "paymentId": pid}
        assert other.call("getPaymentStatus", path=where).status_code == 404
        assert other.call("getPayment", path=where).status_code == 404
        assert other.call("deletePayment", path=where).status_code == 404
        assert other.call("createSigningBasket", body={"paymentIds": [pid]}).status_code == 400
        _initialize(other)
    assert status(tpp, pid)["transactionStatus"] == "RCVD"  # neither cancelled nor reset by the impostor


class Authority:
    """A test CA issuing signing certificates (organizationIdentifier in the subject), as a QTSP would."""

    def __init__(self, name: str = "obvalidate test QTSP") -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = _dt.datetime(2020, 1, 1, tzinfo=_dt.timezone.utc)
        self.certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                            .not_valid_before(now).not_valid_after(now + _dt.timedelta(days=7300))
                            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                            .sign(self.key, hashes.SHA256()))

    def issue(self, organization_identifier: str) -> Identity:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        subject = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"),
                             x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Test TPP AS"),
                             x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, organization_identifier),
                             x509.NameAttribute(NameOID.COMMON_NAME, f"{organization_identifier} QSealC")])
        now = _dt.datetime(2020, 1, 1, tzinfo=_dt.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(self.certificate.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(now + _dt.timedelta(days=7000))
                .sign(self.key, hashes.SHA256()))
        return Identity(key, cert)


def test_with_trusted_cas_only_their_certificates_are_served_and_the_identifier_names_the_tpp(server, checker):
    qtsp = Authority()
    trusting = Sandbox.create(clock=Clock(START, frozen=True), trusted_cas=(qtsp.certificate,))
    previous, server.app.state.sandbox = server.app.state.sandbox, trusting
    try:
        with _client(server, trusting, checker, qtsp.issue("PSDNO-FSA-QTSP1")) as tpp:
            pid = sepa(tpp, "15.00")
        with _client(server, trusting, checker, qtsp.issue("PSDNO-FSA-QTSP1")) as renewed:  # a new key, same CA
            assert status(renewed, pid)["transactionStatus"] == "RCVD"
        with _client(server, trusting, checker, qtsp.issue("PSDNO-FSA-QTSP2")) as another:
            assert another.call("getPaymentStatus", path={**SEPA, "paymentId": pid}).status_code == 404
        with _client(server, trusting, checker, Identity.generate("PSDNO-FSA-QTSP1")) as self_signed:
            refused = self_signed.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
        assert refused.status_code == 401
        assert refused.json()["tppMessages"][0]["code"] == "CERTIFICATE_INVALID", refused.text
        with _client(server, trusting, checker, Authority("another CA").issue("PSDNO-FSA-QTSP1")) as foreign_ca:
            assert foreign_ca.call("getPaymentStatus", path={**SEPA, "paymentId": pid}).status_code == 401
    finally:
        server.app.state.sandbox = previous
        trusting.store.close()


def test_serve_refuses_an_unusable_trusted_ca_file(tmp_path):
    empty = tmp_path / "ca.pem"
    empty.write_text("no certificate here\n")
    for path in (empty, tmp_path / "missing.pem"):
        result = CliRunner().invoke(sandbox_command, ["serve", "--db", ":memory:", "--trusted-ca", str(path)])
        assert result.exit_code == 2 and "--trusted-ca" in result.output, result.output
    assert not any(p.name.endswith(".db") for p in tmp_path.iterdir())
