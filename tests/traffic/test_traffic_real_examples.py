"""The bank-published recorded exchanges (SR-Bank on the Tietoevry platform -- the interface the spec describes --
and DNB, a different API), as HARs built by tools/real_examples_har.py, judged by `obvalidate traffic`. README
"Recording and judging traffic" says what the judge says about each and how the bank's engineer reads it; these
tests hold the verdicts that reading confirms."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from validator.cli import main

HERE = Path(__file__).parent / "real_examples"
SR_BANK = ("--base-path", "/api", "--origin", "https://psd2.sr-bank.no")
DNB = ("--origin", "https://api.psd.dnb.no")


def judged(name: str, *options: str) -> dict[int, dict]:
    result = CliRunner().invoke(main, ["traffic", str(HERE / name), "--format", "json", *options])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    return {r["entry"]: r for r in json.loads(result.output)["results"]}


def found(result: dict, party: str) -> set[tuple[str, str]]:
    return {(f["rule"], f["pointer"]) for f in result["findings"] if f["party"] == party}


def test_the_sr_bank_single_domestic_payment_is_a_product_the_interface_does_not_offer():
    """SR-Bank's platform offers single Norwegian domestic payments (payments x norwegian-domestic-credit-transfers);
    the interface offers that product only as bulk and periodic payments. Its creation (5), authorisation start (6),
    status reads (7, 8) and detail read (9) are each 404 PRODUCT_UNKNOWN on the interface (A7): the client's
    product-unknown, the server's for serving it -- and no answer is judged by another product's schema (the SEPA
    detail's `iban`: the payment is by BBAN)."""
    results = judged("sr-bank.har", *SR_BANK)
    assert len(results) == 10 and all(results[entry]["skipped"] is None for entry in range(5, 10))
    for entry in range(5, 10):
        assert results[entry]["operation"] is None
        assert results[entry]["predicted"] == {"status": 404, "code": "PRODUCT_UNKNOWN"}
        assert found(results[entry], "client") == found(results[entry], "server") == {("product-unknown", "/path")}
    assert not [f for r in results.values() for f in r["findings"] if f["pointer"].endswith("/iban")]


def test_dnb_is_another_api():
    """DNB's single domestic and instant products are no products of this interface, nor is the single domestic
    payment's read; its periodic payment is, and its request and its read lack the Tietoevry headers and body members
    the interface requires."""
    results = judged("dnb.har", *DNB)
    assert len(results) == 15
    for entry in (10, 11, 12):
        assert results[entry]["operation"] is None
        assert found(results[entry], "client") == found(results[entry], "server") == {("product-unknown", "/path")}
    assert results[13]["operation"] == "createPeriodicPayment"
    assert {("header-required", "/headers/PSU-ID"), ("digest-missing", "/headers/Digest")} \
        <= found(results[13], "client")
    # its read is judged by the periodic payment's detail (A4): what its creation lacks, not the bulk's `payments`
    assert results[14]["operation"] == "getPayment"
    assert {pointer for rule, pointer in found(results[14], "server") if rule == "schema-required"} == \
        {"/body/creditorAddress", "/body/creditorAccount/currency", "/body/debtorAccount/currency"}


def test_exchanges_of_the_banks_other_apis_are_skipped():
    results = judged("sr-bank.har", *SR_BANK)
    # SR-Bank's account-information calls: paths of another API of the bank, not of this interface
    assert all("not an operation of the spec" in results[entry]["skipped"] and not results[entry]["findings"]
               for entry in range(5))
    results = judged("dnb.har", *DNB)
    assert all(results[entry]["skipped"] and not results[entry]["findings"] for entry in range(10))
