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


def test_the_sr_bank_session_what_the_bank_does_differently():
    results = judged("sr-bank.har", *SR_BANK)
    assert len(results) == 10 and all(results[entry]["skipped"] is None for entry in range(5, 10))
    # the authorisation start answers scaStatus and scaRedirect only: no authorisationId, no scaStatus link
    assert {("schema-required", "/body/authorisationId"), ("schema-required", "/body/_links/scaStatus")} \
        <= found(results[6], "server")
    # GET payment echoes the payment without its transactionStatus
    assert ("schema-required", "/body/transactionStatus") in found(results[9], "server")
    # RCVD, then PDNG after SCA: a status moving forward is no finding
    assert results[7]["operation"] == results[8]["operation"] == "getPaymentStatus"
    assert not any(f["rule"] == "status-backwards" for r in results.values() for f in r["findings"])


def test_headers_the_recorder_dropped_are_the_recordings_client_findings():
    """Tink's recorder kept only some request headers (the files' notes): the signature, certificate and
    X-Request-ID are missing from the recording, so from the requests as recorded."""
    results = judged("sr-bank.har", *SR_BANK)
    for entry in (6, 7, 8, 9):
        assert {("signature-missing", "/headers/Signature"), ("header-required", "/headers/X-Request-ID"),
                ("certificate-missing", "/headers/TPP-Signature-Certificate")} <= found(results[entry], "client")


def test_dnb_is_another_api():
    """DNB's single domestic and instant products are no products of this interface; its periodic payment is,
    and its request lacks the Tietoevry headers and body members the interface requires."""
    results = judged("dnb.har", *DNB)
    assert len(results) == 15
    for entry in (10, 12):
        assert ("product-unknown", "/path") in found(results[entry], "client")
    assert results[13]["operation"] == "createPeriodicPayment"
    assert {("header-required", "/headers/PSU-ID"), ("digest-missing", "/headers/Digest")} \
        <= found(results[13], "client")


def test_exchanges_of_the_banks_other_apis_are_skipped():
    results = judged("sr-bank.har", *SR_BANK)
    # SR-Bank's account-information calls: paths of another API of the bank, not of this interface
    assert all("not an operation of the spec" in results[entry]["skipped"] and not results[entry]["findings"]
               for entry in range(5))
    results = judged("dnb.har", *DNB)
    assert all(results[entry]["skipped"] and not results[entry]["findings"] for entry in range(10))
