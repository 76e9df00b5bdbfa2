"""Build HAR 1.2 recordings from the bank-published recorded exchanges (the reference material's real-examples
folder: each file one request and its answer, ``_source`` naming where it was recorded), one HAR per bank in the
order a TPP's session makes the calls, for ``obvalidate traffic``:

    python tools/real_examples_har.py REAL_EXAMPLES_DIR tests/traffic/real_examples

The files keep the exchange as recorded: the request's method, URL, headers (``headers_from_client_code`` -- headers
the client's source adds but the recorder did not keep -- are left out: they are not part of the recording) and
body, the answer's status, headers and body, each JSON body written as compact JSON. The recordings carry no time
of their own but one Date header (SR-Bank's create answer, 19 January 2022 12:53:05 GMT), so each session is laid
on that day, ten seconds between calls, the create at the Date it answered with; the entry's ``comment`` is the
file's ``_source``.
"""
from __future__ import annotations

import datetime as _dt
import json
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

SESSIONS = {
    "sr-bank.har": [
        "evry-ais-bank-offered-consents-201", "evry-ais-accounts-200", "evry-ais-balances-200",
        "evry-ais-transactions-200", "evry-ais-card-accounts-empty-200", "evry-pis-domestic-create-201",
        "evry-pis-start-authorisation-201", "evry-pis-status-rcvd-200", "evry-pis-status-pdng-200",
        "evry-pis-get-payment-200",
    ],
    "dnb.har": [
        "dnb-ais-consent-create-201", "dnb-ais-consent-get-valid-200", "dnb-ais-accounts-200",
        "dnb-ais-balances-200", "dnb-ais-transactions-page1-200", "dnb-ais-transactions-misc-types-200",
        "dnb-ais-card-accounts-200", "dnb-ais-card-transactions-empty-200", "dnb-error-card-accounts-404",
        "dnb-error-card-transactions-403", "dnb-pis-domestic-create-201", "dnb-pis-domestic-get-200",
        "dnb-pis-instant-create-201", "dnb-pis-periodic-create-201", "dnb-pis-periodic-get-200",
    ],
}
# SR-Bank's create answered with this Date; its session is laid around it (the create is entry 5).
ANCHOR = _dt.datetime(2022, 1, 19, 12, 53, 5, tzinfo=_dt.timezone.utc)
ANCHOR_ENTRY = 5
STEP = _dt.timedelta(seconds=10)


def _headers(mapping: dict) -> list[dict[str, str]]:
    return [{"name": name, "value": str(value)} for name, value in mapping.items()]


def _body(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def entry(example: dict, at: _dt.datetime) -> dict:
    request, response = example["request"], example["response"]
    har_request = {"method": request["method"], "url": request["url"], "httpVersion": "HTTP/1.1", "cookies": [],
                   "headers": _headers(request.get("headers", {})),
                   "queryString": [{"name": n, "value": v}
                                   for n, v in parse_qsl(urlsplit(request["url"]).query, keep_blank_values=True)],
                   "headersSize": -1, "bodySize": 0}
    if "body" in request:
        text = _body(request["body"])
        har_request["postData"] = {"mimeType": request.get("headers", {}).get("Content-Type", "application/json"),
                                   "text": text}
        har_request["bodySize"] = len(text.encode("utf-8"))
    text = _body(response["body"]) if "body" in response else ""
    headers = response.get("headers", {})
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    har_response = {"status": response["status"], "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": _headers(headers),
                    "content": {"size": len(text.encode("utf-8")), "mimeType": content_type, "text": text},
                    "redirectURL": "", "headersSize": -1, "bodySize": len(text.encode("utf-8"))}
    return {"startedDateTime": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"), "time": 0,
            "request": har_request, "response": har_response, "cache": {},
            "timings": {"send": 0, "wait": 0, "receive": 0}, "comment": example["_source"]}


def build(source: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, files in SESSIONS.items():
        start = ANCHOR - ANCHOR_ENTRY * STEP
        entries = [entry(json.loads((source / f"{stem}.json").read_text(encoding="utf-8")), start + i * STEP)
                   for i, stem in enumerate(files)]
        document = {"log": {"version": "1.2", "creator": {"name": "tools/real_examples_har.py", "version": "1"},
                            "comment": "built from bank-published recorded exchanges (see each entry's comment)",
                            "entries": entries}}
        path = out / name
        path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python tools/real_examples_har.py REAL_EXAMPLES_DIR OUT_DIR")
    for path in build(Path(sys.argv[1]), Path(sys.argv[2])):
        print(path)
