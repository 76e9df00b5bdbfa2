"""The proxy session's report (``--report-dir``): ``proxy.json``, ``proxy.junit.xml`` and ``proxy.html``, written when
the proxy stops. Findings are grouped as the gate groups them -- one row per party, rule and operation, counted,
with the first exchanges that showed it (entry, X-Request-ID, status, curl) -- so a day of traffic repeating one
defect is one row, and the report's size is bounded by the rules, not the traffic. Everything that came from the
client or the upstream is escaped for its format (:mod:`validator.formats.escape`).
"""
from __future__ import annotations

import datetime as _dt
import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from validator.formats import write_documents
from validator.formats.escape import html_text as h, printable, xml_text

from .judging import Tally


def summary(tally: Tally) -> dict[str, Any]:
    return {
        "exchanges": tally.exchanges, "judged": tally.judged, "skipped": tally.skipped,
        "not_judged": tally.not_judged, "only_logged": tally.only_logged,
        "answered_by_proxy": tally.answered_by_proxy, "refused_connections": dict(tally.refused.most_common()),
        "with_findings": tally.with_findings, "client_findings": tally.findings["client"],
        "server_findings": tally.findings["server"], "warnings": tally.warnings,
        "distinct_findings": sum(1 for g in tally.groups.values() if g.severity == "error"),
        "statuses": {str(k): v for k, v in sorted(tally.statuses.items(), key=lambda kv: str(kv[0]))},
        "skipped_by_reason": dict(tally.skip_reasons.most_common()),
        "errors": list(tally.errors[:50]),
    }


def as_json(tally: Tally, upstream: str, *, enforce: bool) -> dict[str, Any]:
    groups = sorted(tally.groups.values(), key=lambda g: (g.party, g.rule, g.operation or ""))
    return {
        "proxy": {"upstream": upstream, "enforce": enforce,
                  "started": _dt.datetime.fromtimestamp(tally.started, _dt.timezone.utc).isoformat(),
                  "seconds": round(time.time() - tally.started, 3)},
        "summary": summary(tally),
        "findings": [{"party": g.party, "rule": g.rule, "operation": g.operation, "severity": g.severity,
                      "ref": g.ref, "message": g.message, "expected": g.expected, "actual": g.actual,
                      "count": g.count, "examples": g.examples} for g in groups],
    }


def verdict_failed(tally: Tally) -> bool:
    """An error finding of either party fails the session (warnings are reported, never fail it)."""
    return any(g.severity == "error" for g in tally.groups.values())


def junit(data: dict[str, Any]) -> str:
    """A testsuite per party, a testcase per operation seen with findings (the failures its finding rows)."""
    s = data["summary"]
    root = ET.Element("testsuites", name="obvalidate proxy", tests=str(s["exchanges"]),
                      failures=str(s["with_findings"]))
    for party in ("client", "server"):
        rows = [f for f in data["findings"] if f["party"] == party]
        failed = sum(1 for f in rows if f["severity"] == "error")
        node = ET.SubElement(root, "testsuite", name=f"{party} findings", tests=str(max(len(rows), 1)),
                             failures=str(failed))
        if not rows:
            ET.SubElement(node, "testcase", classname=f"proxy.{party}", name="no findings")
        for f in rows:
            case = ET.SubElement(node, "testcase", classname=f"proxy.{party}.{f['operation'] or 'unknown'}",
                                 name=xml_text(printable(f["rule"])))
            first = f["examples"][0] if f["examples"] else {}
            if f["severity"] != "error":
                ET.SubElement(case, "system-out").text = xml_text(f"warning, {f['count']}x: {f['message']}")
                continue
            failure = ET.SubElement(case, "failure", type=xml_text(printable(f["rule"])),
                                    message=xml_text(printable(f"{f['count']}x: {f['message']}")))
            failure.text = xml_text(
                f"{f['ref']}\nexpected: {f['expected']}\nactual: {f['actual']}\n"
                f"first: entry {first.get('entry')} {first.get('method')} {first.get('path')} -> "
                f"{first.get('status')} (X-Request-ID {first.get('requestId')})\nreproduce: {first.get('curl')}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


_CSS = """body{font-family:system-ui,sans-serif;margin:2rem;color:#1d2733}h1{font-size:1.4rem}
table{border-collapse:collapse;width:100%;margin:1rem 0}td,th{border-bottom:1px solid #e3e7ec;padding:.3rem .5rem;
text-align:left;font-size:.9rem;vertical-align:top}.failed{color:#a11}.passed{color:#176d2c}
code{font-size:.8rem;word-break:break-all}details{margin:.3rem 0}"""


def html_report(data: dict[str, Any]) -> str:
    s, p = data["summary"], data["proxy"]
    failed = any(f["severity"] == "error" for f in data["findings"])
    verdict = "FAIL" if failed else "PASS"
    rows = "".join(
        f"<tr><td class='{'failed' if f['severity'] == 'error' else ''}'>{h(f['party'])} {h(f['severity'])}</td><td>{h(f['operation'] or '')}</td><td>{h(f['rule'])}<br>"
        f"{h(f['ref'])}</td><td>{f['count']}</td><td>{h(f['message'])}</td><td>{h(f['expected'] or '')}</td>"
        f"<td>{h(f['actual'] or '')}</td><td>{_examples(f['examples'])}</td></tr>" for f in data["findings"])
    statuses = ", ".join(f"{h(k)}: {v}" for k, v in s["statuses"].items())
    skipped = "".join(f"<tr><td>{v}</td><td>{h(k)}</td></tr>" for k, v in s["skipped_by_reason"].items())
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>obvalidate proxy: {verdict}</title>
<style>{_CSS}</style></head><body><h1>obvalidate proxy: <span class='{'failed' if failed else 'passed'}'>
{verdict}</span></h1>
<p>Upstream {h(p['upstream'])}{' (--enforce)' if p['enforce'] else ''}, from {h(p['started'])} for {p['seconds']} s:
{s['exchanges']} exchanges ({s['judged']} judged, {s['skipped']} skipped, {s['not_judged']} not judged of which
{s['only_logged']} only logged at the stop, {s['answered_by_proxy']} answered by the proxy;
{sum(s['refused_connections'].values())} connections refused), {s['with_findings']} with findings: {s['client_findings']} client
and {s['server_findings']} server findings, {s['distinct_findings']} distinct, {s['warnings']} warnings. Statuses: {statuses}.</p>
<h2>Findings</h2><table><tr><th>Party</th><th>Operation</th><th>Rule</th><th>Seen</th><th>What</th><th>Expected</th>
<th>Actual</th><th>First exchanges</th></tr>{rows}</table>
<h2>Skipped, by reason</h2><table><tr><th>Exchanges</th><th>Reason</th></tr>{skipped}</table></body></html>
"""


def _examples(examples: list[dict[str, Any]]) -> str:
    items = "".join(f"<li>entry {e['entry']}: {h(e['method'])} {h(e['path'])} &rarr; {h(e['status'])}, X-Request-ID "
                    f"{h(e['requestId'])}<details><summary>curl</summary><code>{h(e['curl'])}</code></details></li>"
                    for e in examples)
    return f"<ul>{items}</ul>"


def write(tally: Tally, directory: str | Path, upstream: str, *, enforce: bool) -> list[Path]:
    data = as_json(tally, upstream, enforce=enforce)
    files = {"proxy.json": json.dumps(data, indent=2, ensure_ascii=True) + "\n", "proxy.junit.xml": junit(data),
             "proxy.html": html_report(data)}
    return write_documents(directory, files)
