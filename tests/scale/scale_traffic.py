"""A proxy log (JSONL) of two TPPs and the browser of their PSU, with findings of every lifecycle kind, and the rows
``obvalidate traffic --format json`` reports for it.

Recorded from the reference sandbox with its switch that lets a TPP read another's payment: TPP A's ordinary session
(payments, a basket authorised on the SCA page, a deletion), TPP B's payment with three decimals of EUR (a client
finding), B reading A's payment (answered: ``foreign-resource-visible``), and A's last status read edited to go
backwards (``status-backwards``). Times are the sandbox clock's and equal, so the file's order decides, as in
``obvalidate traffic``; the lines are written in that order, answer bodies as recorded.
"""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conformance.client import Identity
from conformance.sandbox.faults import FOREIGN_PAYMENT_READABLE
from sandbox.flows import SEPA, sepa_body
from traffic.traffic_recording import SandboxRecorder, ordinary_session
from validator.cli import main

TPP_B = Identity.generate("PSDNO-FSA-SCALEB")


def write_log(directory: Path) -> Path:
    recorder = SandboxRecorder(directory / "traffic.har", FOREIGN_PAYMENT_READABLE)
    ids = ordinary_session(recorder)
    other = recorder.client(TPP_B)
    other.call("createSepaCreditTransfer", body=sepa_body("12.345"))
    mine = other.call("createSepaCreditTransfer", body=sepa_body("3.00")).json()["paymentId"]
    other.call("getPaymentStatus", path={**SEPA, "paymentId": ids["payment"]})     # A's payment, answered
    other.call("getPaymentStatus", path={**SEPA, "paymentId": mine})
    items = json.loads(recorder.close().read_text())["log"]["entries"]
    reads = [n for n, item in enumerate(items) if item["request"]["method"] == "GET"
             and ids["payment"] in item["request"]["url"] and item["request"]["url"].endswith("/status")]
    last = items[reads[-2]]["response"]["content"]   # A's last own read of its payment
    status = json.loads(last["text"])["transactionStatus"]
    last["text"] = last["text"].replace(f'"{status}"', '"RCVD"')
    log = directory / "traffic.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        for index, item in enumerate(items):
            fh.write(json.dumps({"type": "exchange", "entry": index, **item}) + "\n")
            fh.write(json.dumps({"type": "finding", "entry": index, "rule": "ignored by readers"}) + "\n")
    return log


def cli_traffic_rows(log: Path, profile_digest: str) -> tuple[list[dict], dict]:
    """``obvalidate traffic --format json`` of the log as finding rows, and its summary."""
    result = CliRunner().invoke(main, ["traffic", "--format", "json", str(log)])
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    rows = []
    for entry in document["results"]:
        predicted = entry["predicted"] or {}
        valid = not any(f["severity"] == "error" for f in entry["findings"])
        for f in entry["findings"]:
            rows.append({"source": str(log), "record": entry["entry"], "kind": entry["operation"], "valid": valid,
                         "rule": f["rule"], "severity": f["severity"], "pointer": f["pointer"], "line": None,
                         "column": None, "message": f["message"], "status": predicted.get("status"),
                         "code": predicted.get("code"), "ref": f["ref"], "profile_digest": profile_digest,
                         "party": f["party"], "expected": f["expected"], "actual": f["actual"]})
    return rows, document["summary"]
