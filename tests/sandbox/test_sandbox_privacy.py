"""What the sandbox gives away: the psu-id of the SCA redirect is opaque (A24), resource ids cannot be read back
to a counter or guessed, and the SCA page shows the PSU what is being authorised, escaped."""
from __future__ import annotations

import base64
import binascii
import json
import re

from flows import KARI_NOK, SEPA, authorise, bulk_body, sepa, start

from conformance.sandbox import Sandbox, testdata
from conformance.sandbox.sca import render

KARI = testdata.KARI


def _decodings(opaque: str) -> list[bytes]:
    """Every reading of an id: as is, and Base64 (URL-safe or not, after an ``enc!!`` prefix or not)."""
    text = opaque.removeprefix("enc!!")
    out = [opaque.encode(), text.encode()]
    for decode in (base64.urlsafe_b64decode, base64.b64decode):
        try:
            out.append(decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, ValueError):
            pass
    return out


def test_psu_id_does_not_reveal_the_customer_number(tpp, browser):
    psu_ids = [authorise(tpp, browser, sepa(tpp, amount), KARI)["psu-id"][0] for amount in ("1.00", "2.00")]
    assert psu_ids[0] == psu_ids[1]                     # one PSU, one psu-id
    for reading in _decodings(psu_ids[0]):
        assert KARI.encode() not in reading and b"CUST" not in reading, reading


def test_resource_ids_are_not_a_readable_or_guessable_counter(tpp):
    pids = [sepa(tpp, amount) for amount in ("1.00", "2.00")]
    basket = tpp.call("createSigningBasket", body={"paymentIds": pids}).json()["basketId"]
    authorisations = [start(tpp, pid)["authorisationId"] for pid in pids]
    for opaque in (*pids, basket, *authorisations):
        assert opaque.startswith("enc!!") and len(opaque) >= 5 + 22   # 128 bits, the platform's prefix
        for reading in _decodings(opaque):
            assert not re.search(rb"(PAY|BSK|AUT)-?\d", reading), reading
    assert len({*pids, basket, *authorisations}) == 5
    # the neighbour of an id is not another id: the one after the first payment is not the second
    first = _decodings(pids[0])[2]
    successor = "enc!!" + base64.urlsafe_b64encode(first[:-1] + bytes([(first[-1] + 1) % 256])).decode().rstrip("=")
    assert successor != pids[1]
    assert tpp.call("getPaymentStatus", path={**SEPA, "paymentId": successor}).status_code == 404


def test_the_key_of_ids_survives_a_restart_and_is_renewed_by_a_reset(tmp_path):
    db = str(tmp_path / "sandbox.db")
    first = Sandbox.create(db)
    with first.store.transaction() as tx:
        secret = tx.secret()
    first.store.close()
    second = Sandbox.create(db)
    with second.store.transaction() as tx:
        assert tx.secret() == secret                     # ids and psu-ids derived after a restart are the same
        second.data.initialize(tx)
        assert tx.secret() != secret                     # counted from 1 again, ids must not repeat old ones
    second.store.close()


def _row(body: dict, service: str = "payments") -> dict:
    return {"body": json.dumps(body), "service": service}


def test_sca_page_shows_remittance_and_end_to_end_id(tpp, browser):
    pid = sepa(tpp, "9.00", text="Husleie desember")
    page = browser.get(start(tpp, pid)["_links"]["scaRedirect"]["href"]).text
    assert "Husleie desember" in page and "Remittance" in page

    bulk = bulk_body("10.00", "20.00", debtor=KARI_NOK)
    bulk["payments"][0].pop("remittanceInformationUnstructured")
    bulk["payments"][0]["remittanceInformationStructuredArray"] = [{"reference": "1234567890128", "referenceType": "SCOR"}]
    bulk["payments"][0]["endToEndIdentification"] = "FAKTURA-88213"
    shown = render({"subject_kind": "payment", "sca_status": "started", "token": "t"}, [_row(bulk, "bulk-payments")])
    assert "1234567890128 (SCOR)" in shown and "FAKTURA-88213" in shown and "Betaling 1" in shown


def test_sca_page_escapes_what_it_shows():
    body = {"instructedAmount": {"amount": "1.00", "currency": "EUR"}, "creditorName": "A & B",
            "creditorAccount": {"iban": "DE89370400440532013000"}, "debtorAccount": {"iban": "NO9386011117947"},
            "remittanceInformationUnstructured": "<script>alert(1)</script>", "endToEndIdentification": "<b>e2e</b>"}
    shown = render({"subject_kind": "payment", "sca_status": "started", "token": "t"}, [_row(body)])
    assert "<script>alert" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown
    assert "<b>e2e" not in shown and "&lt;b&gt;e2e&lt;/b&gt;" in shown and "A &amp; B" in shown
