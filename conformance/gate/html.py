"""The gate's HTML report (``conform.html``), rendered from the JSON report (:func:`conformance.gate.report.as_json`).

One self-contained page a person reads once: the verdict and the counts at the top (failures, differences, what was
not exercised and why), a matrix of operations × suites coloured by outcome, then the findings grouped by operation
and rule, each with the expected and the actual answer side by side, the answer's body pretty-printed in a block of
its own, and the curl one click away (a copy button beside it). A search box and the tier and baseline boxes filter
the findings; a matrix cell filters to its operation and suite. A finding is a *failure* or, where the interface
document leaves the point open and the target reads it otherwise, a *difference* (``tier``; a report without tiers
has failures only).

Everything from the target (messages, codes, bodies, headers, operation names it made us see) is escaped
(:func:`validator.formats.escape.html_text`): the page has no markup of the target's making, and it loads nothing --
inline CSS and script, no link, no image, no font.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from validator.formats.escape import html_text as e

from .model import SEVERAL_ANSWERS

FAILURE, DIFFERENCE = "failure", "difference"
# Outcome statuses from worst to best: a matrix cell shows the worst of its checks.
CELL_ORDER = ("failed", "error", "difference", "passed", "not-exercised")
CELL_LABEL = {"failed": "failed", "error": "error", "difference": "differs", "passed": "passed",
              "not-exercised": "not exercised"}
BODY_SHOWN = 4000   # characters of a pretty-printed answer body shown (the JSON report has the excerpt whole)

CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f4f6f9}
header{background:#17324d;color:#fff;padding:18px 28px 16px}header h1{margin:0 0 6px;font-size:21px;font-weight:600}
header p{margin:2px 0;opacity:.88;font-size:13px}main{padding:18px 28px 40px;max-width:1500px}
.verdict{display:inline-block;border-radius:6px;padding:2px 12px;margin-right:10px;font-weight:700;letter-spacing:.5px}
.verdict.fail{background:#c62828}.verdict.pass{background:#2e7d32}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:0 0 18px}
.card{background:#fff;border-radius:8px;padding:10px 16px;min-width:120px;box-shadow:0 1px 2px #0002;
border-top:4px solid #c9d1dc}.card b{display:block;font-size:24px;line-height:1.2}.card span{color:#4f5968}
.card.bad{border-top-color:#c62828}.card.bad b{color:#b3261e}.card.warn{border-top-color:#e0a100}
.card.warn b{color:#8a5a00}.card.good{border-top-color:#2e7d32}.card.good b{color:#1e7b34}
.card.muted b{color:#5b6575}
h2{font-size:17px;margin:26px 0 8px}h2 small{font-weight:400;color:#5b6575;font-size:13px}
.panel{background:#fff;border-radius:8px;box-shadow:0 1px 2px #0002;padding:10px 14px;margin:0 0 14px}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #e6e9ee;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600;font-size:13px}td.n{text-align:right;white-space:nowrap}
.reasons td:first-child{width:70px}
.matrix{width:auto;min-width:60%}.matrix th.op,.matrix td.op{white-space:nowrap;font:12px ui-monospace,monospace}
.matrix td.cell{text-align:center;min-width:96px;font-size:12px;cursor:pointer;border:2px solid #fff;border-radius:4px}
.matrix td.cell:hover{outline:2px solid #17324d}
.c-failed{background:#f8d3d0;color:#8c1d18;font-weight:600}.c-error{background:#7f1d1d;color:#fff;font-weight:600}
.c-difference{background:#fdebc2;color:#7a4f00;font-weight:600}.c-passed{background:#d7f0dd;color:#1e5e2f}
.c-not-exercised{background:#e9ecf1;color:#5b6575}.c-none{background:#fafbfc;color:#b6bdc8;cursor:default}
.legend{display:flex;gap:14px;font-size:12px;margin:6px 0 0;flex-wrap:wrap}
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:-2px}
.tools{position:sticky;top:0;background:#f4f6f9;padding:10px 0;z-index:2;display:flex;gap:18px;align-items:center;
flex-wrap:wrap;border-bottom:1px solid #dde2e8}
.tools input[type=search]{font-size:15px;padding:6px 10px;width:380px;border:1px solid #9aa5b4;border-radius:6px}
.tools #shown{color:#4f5968}.tools #clear{display:none}
section.op{margin:16px 0 20px}section.op>h3{font:600 14px ui-monospace,monospace;margin:0 0 6px;color:#17324d}
.rule{background:#fff;border-radius:8px;box-shadow:0 1px 2px #0002;margin:0 0 10px;border-left:5px solid #c62828}
.rule.difference{border-left-color:#e0a100}.rule>h4{margin:0;padding:8px 14px;font-size:14px;display:flex;gap:10px;
align-items:baseline;flex-wrap:wrap;border-bottom:1px solid #eef0f3}.rule>h4 .ref{font-weight:400;color:#5b6575;
font-size:12px}
.finding{padding:10px 14px;border-bottom:1px solid #eef0f3}.finding:last-child{border-bottom:0}
.meta{font-size:12px;color:#5b6575;margin:0 0 4px}.meta code{font-size:11px}
.msg{margin:2px 0 8px;font-size:14px}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:11px;font-weight:600;margin-right:4px}
.b-failure{background:#fde2e0;color:#8c1d18}.b-difference{background:#fdebc2;color:#7a4f00}
.b-new{background:#17324d;color:#fff}.b-known{background:#e3e7ec;color:#4f5968}
.answer{display:grid;grid-template-columns:minmax(180px,1fr) minmax(180px,1fr);gap:10px;margin:0 0 8px}
.answer div{background:#f7f8fa;border-radius:6px;padding:6px 10px}.answer div b{display:block;font-size:11px;
color:#5b6575;text-transform:uppercase;letter-spacing:.4px}
.answer .actual{background:#fff4f3}.difference .answer .actual{background:#fff8e6}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace;unicode-bidi:isolate}
pre.body{background:#1e2633;color:#e6edf5;border-radius:6px;padding:8px 12px;max-height:320px;overflow:auto;
margin:0 0 6px}
details{margin:4px 0}summary{cursor:pointer;color:#17324d;font-size:13px}
details.curl pre{background:#f3f4f6;border-radius:6px;padding:8px 10px;margin-top:4px}
button.copy{font-size:12px;margin-left:8px;padding:1px 8px;border:1px solid #9aa5b4;border-radius:4px;
background:#fff;cursor:pointer}
.hidden{display:none!important}
.muted{color:#5b6575}ul.plain{margin:4px 0;padding-left:18px}
.checks td:nth-child(4){white-space:nowrap}.s-failed{color:#b3261e;font-weight:600}.s-error{color:#7f1d1d;
font-weight:600}.s-passed{color:#1e7b34}.s-not-exercised{color:#8a5a00}
"""

SCRIPT = """
(function(){
 var q=document.getElementById('q'),count=document.getElementById('shown'),clear=document.getElementById('clear');
 var tiers=document.querySelectorAll('input[data-tier]'),onlyNew=document.getElementById('new');
 var cellOp=null,cellSuite=null;
 var given=new URLSearchParams(location.search);  // ?q=term: a link to a filtered view
 if(given.get('q'))q.value=given.get('q');
 function apply(){
  var term=q.value.trim().toLowerCase(),n=0,shownTiers={};
  tiers.forEach(function(t){shownTiers[t.dataset.tier]=t.checked;});
  document.querySelectorAll('section.op').forEach(function(sec){
   var anyOp=false;
   sec.querySelectorAll('.rule').forEach(function(rule){
    var anyRule=false;
    rule.querySelectorAll('.finding').forEach(function(f){
     var d=f.dataset,show=shownTiers[d.tier]!==false&&(!onlyNew||!onlyNew.checked||d.baseline!=='known')
      &&(!cellOp||(d.op===cellOp&&(' '+d.suites+' ').indexOf(' '+cellSuite+' ')>=0))
      &&(!term||f.textContent.toLowerCase().indexOf(term)>=0||rule.dataset.key.indexOf(term)>=0);
     f.classList.toggle('hidden',!show);if(show){anyRule=true;n++;}
    });
    rule.classList.toggle('hidden',!anyRule);anyOp=anyOp||anyRule;
   });
   sec.classList.toggle('hidden',!anyOp);
  });
  count.textContent=n+' of '+document.querySelectorAll('.finding').length+' findings shown';
  clear.style.display=cellOp?'inline-block':'none';
  if(cellOp)clear.textContent='\\u2715 only '+cellOp+' \\u00b7 '+cellSuite;
 }
 document.querySelectorAll('td.cell[data-op]').forEach(function(c){
  c.addEventListener('click',function(){cellOp=c.dataset.op;cellSuite=c.dataset.suite;apply();
   document.getElementById('findings').scrollIntoView();});
 });
 clear.addEventListener('click',function(){cellOp=null;cellSuite=null;apply();});
 document.querySelectorAll('button.copy').forEach(function(b){
  b.addEventListener('click',function(ev){ev.preventDefault();
   var text=b.parentNode.parentNode.querySelector('pre').textContent;
   if(navigator.clipboard){navigator.clipboard.writeText(text).then(function(){b.textContent='copied';});}
  });
 });
 q.addEventListener('input',apply);tiers.forEach(function(t){t.addEventListener('change',apply);});
 if(onlyNew)onlyNew.addEventListener('change',apply);apply();
})();
"""


def tier(finding: dict[str, Any]) -> str:
    """A finding's tier: ``difference`` where the report says so, else ``failure`` (a report without tiers)."""
    return DIFFERENCE if finding.get("tier") == DIFFERENCE else FAILURE


def counts(data: dict[str, Any]) -> dict[str, int]:
    """Failures and differences: the summary's own counts where it has them, else counted from the findings."""
    s, findings = data["summary"], data["findings"]
    tiers = Counter(tier(f) for f in findings)
    return {"failures": int(s.get("failures", tiers[FAILURE])), "differences": int(s.get("differences",
                                                                                          tiers[DIFFERENCE]))}


def failed(data: dict[str, Any]) -> bool:
    """The page's verdict: a failure that is not a known one of the baseline, or a check that broke."""
    gating = [f for f in data["findings"] if tier(f) == FAILURE and f.get("baseline") != "known"]
    return bool(gating or data["summary"].get("error"))


def pretty(excerpt: str) -> str:
    """An answer's body for reading: JSON indented -- a body the report cut short (its excerpt ends in "…") too, by
    its brackets and commas outside strings --, anything else as it came (bounded)."""
    text = excerpt or ""
    try:
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        if text.lstrip()[:1] in ("{", "["):
            text = _indent_cut_json(text)
    return text if len(text) <= BODY_SHOWN else text[:BODY_SHOWN] + f"\n… {len(text) - BODY_SHOWN} more characters"


def _indent_cut_json(text: str) -> str:
    """JSON text that does not parse (cut short) indented by its structure: a new line after each ``{``, ``[`` and
    ``,`` and before each ``}`` and ``]`` outside a string, two spaces a level."""
    out: list[str] = []
    depth, in_string, escaped = 0, False, False
    for ch in text.strip():
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
            out.append(ch)
        elif ch in "{[":
            depth += 1
            out.append(ch + "\n" + "  " * depth)
        elif ch in "}]":
            depth = max(depth - 1, 0)
            out.append("\n" + "  " * depth + ch)
        elif ch == ",":
            out.append(",\n" + "  " * depth)
        elif ch == ":":
            out.append(": ")
        elif not ch.isspace():
            out.append(ch)
    return "".join(out)


def matrix(data: dict[str, Any]) -> dict[str, dict[str, tuple[str, Counter]]]:
    """Operation -> suite -> (its cell's outcome, the outcomes counted): failed (``difference`` when each finding
    there is a difference), else error, passed, not exercised -- the worst of its checks."""
    tiers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for f in data["findings"]:
        for suite in f.get("suites", []):
            tiers[(f["operation"], suite)].add(tier(f))
    cells: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for o in data["outcomes"]:
        cells[o["operation"]][o["suite"]][o["status"]] += 1
    out: dict[str, dict[str, tuple[str, Counter]]] = {}
    for op, suites in cells.items():
        out[op] = {}
        for suite, tally in suites.items():
            worst = next((status for status in ("failed", "error", "passed") if tally.get(status)), "not-exercised")
            if worst == "failed" and tiers.get((op, suite)) == {DIFFERENCE}:
                worst = "difference"
            out[op][suite] = (worst, tally)
    return out


def page(data: dict[str, Any]) -> str:
    s, run = data["summary"], data["run"]
    tallies = counts(data)
    verdict = "FAIL" if failed(data) else "PASS"
    suites = list(data["suites"])
    title = f"obvalidate conform: {verdict}"
    out = [f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{e(title)} — {e(run["target"])}'
           f'</title><meta name="viewport" content="width=device-width,initial-scale=1"><style>{CSS}</style></head>'
           "<body>", _header(data, verdict), "<main>", _cards(data, tallies)]
    out += _not_exercised(s)
    out += _matrix_html(data, suites)
    out += _findings_html(data, tallies)
    out += _checks_html(data)
    out += _coverage_html(data)
    out.append(f"</main><script>{SCRIPT}</script></body></html>")
    return "\n".join(out) + "\n"


def _header(data: dict[str, Any], verdict: str) -> str:
    run, s = data["run"], data["summary"]
    judged = data.get("judged_by") or {}
    parts = [f"target {e(run['target'])}", f"seed {data['seed']}", f"max examples {data['max_examples']}",
             f"suites {e(', '.join(data['suites']))}", f"{s['cases']} requests in {run['seconds']} s"]
    if judged.get("profile"):
        profile = judged["profile"]
        parts.append("profile " + e(profile.get("name") or "default")
                     + (f" ({e(profile['file'])}, sha256 {e(str(profile.get('sha256'))[:12])}…)"
                        if profile.get("file") else ""))
    if judged.get("gateway_headers"):
        parts.append("-H " + e(", ".join(judged["gateway_headers"])))
    if judged.get("rate_limit"):
        parts.append(f"rate limit {e(judged['rate_limit'])}/s")
    if judged.get("request_timeout"):
        parts.append(f"request timeout {e(judged['request_timeout'])} s")
    if run.get("tls"):
        parts.append("TLS " + ("verified" if run["tls"].get("verified") else "NOT verified (--insecure)"))
    return (f'<header><h1><span class="verdict {verdict.lower()}">{verdict}</span>obvalidate conform</h1>'
            f"<p>{' · '.join(parts)}</p></header>")


def _cards(data: dict[str, Any], tallies: dict[str, int]) -> str:
    s = data["summary"]
    not_exercised = s["not-exercised"]
    cards = [(tallies["failures"], "failures", "bad" if tallies["failures"] else "good"),
             (tallies["differences"], "differences", "warn" if tallies["differences"] else "good"),
             (s["passed"], "outcomes passed", "good"),
             (s["failed"], "outcomes failed", "bad" if s["failed"] else "good"),
             (not_exercised, "not exercised", "muted"), (s["error"], "errors", "bad" if s["error"] else "good"),
             (s["checks"], "checks", "muted"), (s["cases"], "requests", "muted")]
    if "baseline" in s:
        b = s["baseline"]
        cards[2:2] = [(b["new"], "new", "bad" if b["new"] else "good"), (b["known"], "known", "muted"),
                      (b["resolved"], "resolved", "good")]
    return '<div class="cards">' + "".join(f'<div class="card {cls}"><b>{n}</b><span>{e(label)}</span></div>'
                                           for n, label, cls in cards) + "</div>"


def _not_exercised(s: dict[str, Any]) -> list[str]:
    reasons = s["not_exercised_by_reason"]
    if not reasons:
        return []
    rows = "".join(f'<tr><td class="n">{n}</td><td>{e(reason)}</td></tr>' for reason, n in reasons.items())
    return [f"<h2>Not exercised, by reason <small>{sum(reasons.values())} check × operation outcomes</small></h2>",
            f'<div class="panel"><table class="reasons"><thead><tr><th>outcomes</th><th>why</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"]


def _matrix_html(data: dict[str, Any], suites: list[str]) -> list[str]:
    cells = matrix(data)
    head = "".join(f"<th>{e(suite)}</th>" for suite in suites)
    rows = []
    for op in sorted(cells, key=lambda o: (o in ("-", "*", ""), o)):
        row = [f'<td class="op">{e(op)}</td>']
        for suite in suites:
            if suite not in cells[op]:
                row.append('<td class="cell c-none">·</td>')
                continue
            worst, tally = cells[op][suite]
            detail = ", ".join(f"{n} {CELL_LABEL.get(status, status)}" for status, n in sorted(tally.items()))
            shown = tally.get("failed", 0) + tally.get("error", 0) if worst in ("failed", "error", "difference") \
                else sum(tally.values()) if worst == "passed" else tally.get("not-exercised", 0)
            row.append(f'<td class="cell c-{worst}" data-op="{e(op)}" data-suite="{e(suite)}" title="{e(detail)}">'
                       f"{shown} {e(CELL_LABEL[worst])}</td>")
        rows.append("<tr>" + "".join(row) + "</tr>")
    legend = "".join(f'<span><i class="c-{status}"></i>{e(CELL_LABEL[status])}</span>' for status in CELL_ORDER)
    return ["<h2>Operations × suites <small>each cell: the worst outcome of its checks; click one to see its "
            "findings</small></h2>",
            f'<div class="panel"><table class="matrix"><thead><tr><th class="op">operation</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table><div class="legend">{legend}</div></div>']


def _findings_html(data: dict[str, Any], tallies: dict[str, int]) -> list[str]:
    findings = data["findings"]
    out = [f'<h2 id="findings">Findings <small>{len(findings)} (one per fingerprint: a defect several checks saw is '
           f"one finding naming them), grouped by operation and rule</small></h2>"]
    if "baseline" in data:
        b = data["baseline"]
        out.append(f'<p class="muted">Against the baseline {e(b["file"])}: {b["known"]} known, {b["new"]} new, '
                   f'{b["resolved"]} resolved, {b["not_rechecked"]} not rechecked.</p>')
    boxes = (f'<label><input type="checkbox" data-tier="failure" checked> failures ({tallies["failures"]})</label>'
             f'<label><input type="checkbox" data-tier="difference" checked> differences '
             f'({tallies["differences"]})</label>')
    if "baseline" in data:
        boxes += '<label><input type="checkbox" id="new"> new only</label>'
    out.append('<div class="tools"><input id="q" type="search" placeholder="Find a rule, code, message or value…">'
               f'{boxes}<button id="clear" type="button"></button><span id="shown"></span></div>')
    if not findings:
        out.append('<div class="panel">No finding: every check that ran agreed with the interface.</div>')
        return out
    failures = [f for f in findings if tier(f) == FAILURE]
    differences = [f for f in findings if tier(f) == DIFFERENCE]
    out.append(f'<h3 class="tier">Failures <small>{len(failures)}: answers the interface document itself contradicts '
               "(or a decision the profile pins); they fail the run</small></h3>")
    out += _by_operation(failures) if failures else ['<div class="panel">No failure.</div>']
    out.append('<h2 id="differences">Differences <small>' f"{len(differences)}: answers following another reading "
               "of a point the document leaves open; never failing the run. The profile line states the target's "
               "choice; pinning the decision (<code>pinned-decisions</code>, <code>--strict</code>) makes ours a "
               "requirement</small></h2>")
    out += _by_operation(differences) if differences else ['<div class="panel">No difference.</div>']
    return out


def _by_operation(findings: list[dict[str, Any]]) -> list[str]:
    """Findings grouped by operation, then rule."""
    out: list[str] = []
    by_op: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for f in findings:
        by_op[f["operation"]][f["rule"]].append(f)
    order = sorted(by_op, key=lambda op: (not any(tier(f) == FAILURE for r in by_op[op].values() for f in r), op))
    for op in order:
        out.append(f'<section class="op"><h3>{e(op)}</h3>')
        rules = sorted(by_op[op].items(), key=lambda kv: (all(tier(f) == DIFFERENCE for f in kv[1]), kv[0]))
        for rule, items in rules:
            kind = DIFFERENCE if all(tier(f) == DIFFERENCE for f in items) else FAILURE
            first = items[0]
            key = f"{op} {rule} {first.get('ref', '')}".lower()
            decision = f" · {e(first['decision'])}" if first.get("decision") else ""
            out.append(f'<div class="rule {kind}" data-key="{e(key)}"><h4><span>{e(rule)}</span>'
                       f'<span class="ref">{e(first.get("ref", ""))}{decision}</span>'
                       f'<span class="ref">{len(items)} finding{"s" if len(items) != 1 else ""}</span></h4>')
            out += [_finding_html(f) for f in items]
            out.append("</div>")
        out.append("</section>")
    return out


def _finding_html(f: dict[str, Any]) -> str:
    kind = tier(f)
    badges = f'<span class="badge b-{kind}">{kind}</span>'
    if f.get("baseline"):
        badges += f'<span class="badge b-{e(f["baseline"])}">{e(f["baseline"])}</span>'
    seen = f"seen {f['occurrences']}× by {', '.join(f['checks'])}" if f["occurrences"] > 1 else f"by {f['check']}"
    parts = [f'<div class="finding" data-tier="{kind}" data-op="{e(f["operation"])}" '
             f'data-suites="{e(" ".join(f.get("suites", [])))}" data-baseline="{e(f.get("baseline") or "")}">',
             f'<p class="meta">{badges}<b>{e(f["id"])}</b> · {e(seen)} · fingerprint <code>{e(f["fingerprint"])}'
             "</code></p>", f'<p class="msg">{e(f["message"])}</p>']
    if f.get("profile_line"):
        parts.append(f'<p class="meta">the profile line stating the target\'s choice: <code>{e(f["profile_line"])}</code>'
                     "</p>")
    answered = "several answers: the message above says them" if f["actual"] == SEVERAL_ANSWERS else f["actual"]
    parts.append(f'<div class="answer"><div><b>expected</b>{e(f["expected"])}</div>'
                 f'<div class="actual"><b>answered</b>{e(answered)}</div></div>')
    if f.get("excerpt"):
        parts.append(f'<pre class="body">{_lines(pretty(f["excerpt"]))}</pre>')
    if f.get("headers"):
        items = "\n".join(f"{e(n)}: {e(v)}" for n, v in f["headers"].items())
        parts.append(f"<details><summary>answer headers ({len(f['headers'])})</summary><pre>{items}</pre></details>")
    if f.get("also"):
        items = "".join(f"<li>{e(a['check'])}: {e(a['message'])}</li>" for a in f["also"])
        parts.append(f'<details><summary>also seen as ({len(f["also"])})</summary><ul class="plain">{items}</ul>'
                     "</details>")
    if f.get("curl"):
        parts.append('<details class="curl"><summary>curl to reproduce<button class="copy" type="button">copy'
                     f'</button></summary><pre>{e(f["curl"])}</pre></details>')
    parts.append("</div>")
    return "".join(parts)


def _lines(text: str) -> str:
    """Text of several lines for a ``<pre>``: each line escaped (printable, markup-free), the line breaks kept."""
    return "\n".join(e(line) for line in text.split("\n"))


def _checks_html(data: dict[str, Any]) -> list[str]:
    rows = "".join(f"<tr><td>{e(o['suite'])}</td><td>{e(o['check'])}</td><td>{e(o['operation'])}</td>"
                   f"<td class='s-{e(o['status'])}'>{e(o['status'])}</td><td class='n'>{o['cases']}</td>"
                   f"<td>{e(o['reason'].splitlines()[0] if o['reason'] else '')}</td></tr>" for o in data["outcomes"])
    return [f"<h2>Every check <small>{len(data['outcomes'])} check × operation outcomes</small></h2>",
            f'<details class="panel"><summary>the outcomes, one per check and operation</summary><table class="checks">'
            f"<thead><tr><th>suite</th><th>check</th><th>operation</th><th>status</th><th>requests</th><th>why</th>"
            f"</tr></thead><tbody>{rows}</tbody></table></details>"]


def _coverage_html(data: dict[str, Any]) -> list[str]:
    cov = data.get("coverage") or {}
    out = ["<h2>Clause coverage</h2>"]
    for name, title in (("rules", "Rules"), ("decisions", "Decisions"), ("sections", "Document sections"),
                        ("links", "Links")):
        part = cov.get(name)
        if not part:
            continue
        done = ", ".join(e(x) for x in part["exercised"])
        missing = "".join(f"<li>{e(k)}: {e(v)}</li>" for k, v in part["not_exercised"].items())
        out.append(f'<details class="panel"><summary>{title}: {len(part["exercised"])} exercised, '
                   f'{len(part["not_exercised"])} not</summary><p>{done}</p><ul class="plain">{missing}</ul>'
                   "</details>")
    return out
