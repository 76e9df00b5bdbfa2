"""The edge-case report: report.json (every case), report.md and a self-contained report.html (inline CSS, a few
lines of inline script for the search box and the filter, the chart as inline SVG; no network, no external asset).

Cases are grouped by rule and field with the document section; groups with disagreements come first, and within a
group the disagreements. Each row names the operation (a field such as Amount.currency is in several requests) and
the decisions (A<n>) behind its verdict. The summary table and the chart give the agreement per rule over the cases
sent, and how many were not sent; a section counts and explains why cases were not sent (the page keeps a curl
command for each disagreement; report.json has one for every case sent).

What the target answered (and every value) is data, never markup or terminal control (validator.formats.escape):
each text line printable, HTML and Markdown without markup of the target's making, report.json with C1 escaped.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from validator.formats import write_documents
from validator.formats.escape import html_text, json_text, markdown_text, printable

from .run import NOT_EXERCISED, NOT_SENT, Case, Result

INPUT_SHOWN = 90  # characters of an input shown in the tables (the whole request is in the JSON and the curl)


@dataclass
class Group:
    rule: str
    field: str
    section: str
    cases: list[Case] = field(default_factory=list)

    @property
    def disagree(self) -> int:
        return sum(c.agree is False for c in self.cases)

    @property
    def agree(self) -> int:
        return sum(c.agree is True for c in self.cases)


@dataclass
class RuleRow:
    rule: str
    cases: int = 0
    agree: int = 0
    disagree: int = 0
    refused: int = 0
    not_sent: int = 0

    @property
    def sent(self) -> int:
        return self.agree + self.disagree


def groups(result: Result) -> list[Group]:
    by_key: dict[tuple[str, str], Group] = {}
    for case in result.cases:
        g = by_key.setdefault((case.rule, case.field), Group(case.rule, case.field, case.section))
        g.cases.append(case)
    out = list(by_key.values())
    for g in out:
        g.cases.sort(key=lambda c: c.agree is not False)  # stable: disagreements first, else spec order
    out.sort(key=lambda g: (-g.disagree, g.rule, g.field))
    return out


def rule_rows(result: Result) -> list[RuleRow]:
    rows: dict[str, RuleRow] = {}
    for case in result.cases:
        row = rows.setdefault(case.rule, RuleRow(case.rule))
        row.cases += 1
        row.agree += case.agree is True
        row.disagree += case.agree is False
        row.refused += case.verdict == "refused"
        row.not_sent += case.agree is None
    return sorted(rows.values(), key=lambda r: (-r.disagree, r.rule))


def summary(result: Result) -> dict[str, Any]:
    cases = result.cases
    return {"cases": len(cases), "groups": len({c.group for c in cases}), "rules": len({c.rule for c in cases}),
            "sent": sum(c.agree is not None for c in cases), "not_sent": sum(c.agree is None for c in cases),
            "agree": sum(c.agree is True for c in cases),
            "disagree": sum(c.agree is False for c in cases), "refused": sum(c.verdict == "refused" for c in cases),
            "disagreeing_rules": sorted({c.rule for c in cases if c.agree is False})}


def unsent(result: Result) -> dict[tuple[str, str], int]:
    """Why cases were not sent to the target: (NOT_SENT or NOT_EXERCISED, the reason) with how many, most first."""
    out: dict[tuple[str, str], int] = {}
    if result.target == "none":
        return out
    for c in result.cases:
        if c.agree is None:
            key = (c.unsent or NOT_SENT, c.note or "—")
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


# What each way of not being sent means, for a reader of the report.
UNSENT_MEANING = {
    NOT_SENT: "left out by design: the edge needs what a request cannot set on the target (an instant of its clock, "
              "payments it holds), or its kind's answer depends on the target's state; the validator's verdict is "
              "the contract's answer",
    NOT_EXERCISED: "the target lacked what the edge needs (the sandbox's fixed test data, an operation) or gave no "
                   "answer to judge; the validator judged the request alone",
}


def share(row: RuleRow) -> str:
    """The agreement of a rule over the cases sent, never more than they show: "100% of 4 sent agree, 2 not sent"."""
    if not row.sent:
        return f"none of {row.cases} sent"
    text = f"{100 * row.agree / row.sent:.0f}% of {row.sent} sent agree"
    return text + (f", {row.not_sent} not sent" if row.not_sent else "")


def not_exercised(result: Result) -> dict[str, int]:
    """Why cases were not exercised (the target lacks what they need), with how many."""
    out: dict[str, int] = {}
    for c in result.cases:
        if c.unsent == NOT_EXERCISED:
            out[c.note] = out.get(c.note, 0) + 1
    return out


def searches_not_exercised(result: Result) -> dict[str, list[str]]:
    """Why searches were not exercised, with the rule · kind pairs each reason stopped."""
    out: dict[str, list[str]] = {}
    for s in result.searches_not_exercised:
        out.setdefault(s["why"], []).append(f"{s['rule']} · {s['kind']}")
    return out


def as_json(result: Result) -> dict[str, Any]:
    return {**result.as_dict(), "summary": summary(result)}


def text(result: Result) -> str:
    s = summary(result)
    lines = [f"{s['cases']} edge cases over {s['rules']} rules ({s['groups']} rule/field groups), target "
             f"{result.target}, today {result.today} (Europe/Oslo), {result.seconds:.1f} s"]
    if result.target == "none":
        lines.append(f"the validator refuses {s['refused']} and accepts {s['cases'] - s['refused']}")
    else:
        lines.append(f"sent {s['sent']}: {s['agree']} agree, {s['disagree']} disagree; not sent {s['not_sent']}; "
                     f"the Hypothesis search sent {result.searched} more requests")
        for why, n in not_exercised(result).items():
            lines.append(f"  not exercised: {n} case(s): {why}")
        for why, pairs in searches_not_exercised(result).items():
            lines.append(f"  search not exercised for {len(pairs)} rule/kind pair(s): {why}")
        for row in rule_rows(result):
            if row.disagree:
                lines.append(f"  ✗ {row.rule}: {row.disagree} disagreement(s)")
    return "\n".join(printable(line) for line in lines) + "\n"


def write(result: Result, out_dir: str | Path) -> list[Path]:
    files = {"report.json": json_text(json.dumps(as_json(result), indent=1, ensure_ascii=False, default=str)) + "\n",
             "report.md": markdown(result), "report.html": page(result)}
    return write_documents(out_dir, files)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)  # quotes and escapes show spaces, newlines, combining marks
    return text if len(text) <= INPUT_SHOWN else text[:INPUT_SHOWN] + f"… ({len(text)} chars)"


def _why(case: Case) -> str:
    """The rules behind the verdict and the decisions behind those (A<n>)."""
    rules = ", ".join(dict.fromkeys(f"{f['rule']}" + ("" if f["severity"] == "error" else " (warning)")
                                    for f in case.findings)) or "—"
    return rules + (f" · {', '.join(case.assumptions)}" if case.assumptions else "")


def _unsent_cell(case: Case) -> str:
    return f"{case.unsent or NOT_SENT}: {case.note}" if case.note else "—"


def target_note(result: Result) -> str:
    """How to run a case's curl: it names the target as $TARGET (the run's base URL may be a temporary port)."""
    where = ("the base URL of a sandbox (`obvalidate sandbox serve --port 8080` serves one on 127.0.0.1:8080)"
             if result.target == "reference" else result.target)
    unverified = " TLS: the target's certificate was not verified (--insecure)." \
        if result.tls and not result.tls.get("verified", True) else ""
    return f"The curls name the target as $TARGET: export TARGET={where}.{unverified}"


# ---------------------------------------------------------------------------------------------- markdown
def markdown(result: Result) -> str:
    s = summary(result)
    has_target = result.target != "none"
    out = [f"# Edge cases of the interface — target {_md(result.target)}", "",
           f"Today {result.today} (Europe/Oslo) · seed {result.seed} · {s['cases']} cases · {s['rules']} rules · "
           f"{result.seconds:.1f} s" + (f" · fault switches: {_md(', '.join(result.faults))}" if result.faults else ""),
           ""]
    if has_target:
        out += [f"Sent {s['sent']} of {s['cases']} cases: {s['agree']} agree, {s['disagree']} disagree; "
                f"{s['not_sent']} not sent (see \"Not sent\"). The Hypothesis search sent {result.searched} more "
                f"requests. {_md(target_note(result))}", ""]
    out += ["## Summary", "", "| rule | cases | refused by the validator | "
            + ("sent | not sent | agree | disagree | agreement |" if has_target else ""),
            "|---|---:|---:|" + ("---:|---:|---:|---:|---|" if has_target else "")]
    for row in rule_rows(result):
        out.append(f"| {_md(row.rule)} | {row.cases} | {row.refused} |"
                   + (f" {row.sent} | {row.not_sent} | {row.agree} | {row.disagree} | {share(row)} |"
                      if has_target else ""))
    out += _md_unsent(result)
    if has_target:
        out += _md_not_exercised(result)
    for g in groups(result):
        out += ["", f"## {_md(g.rule)} · {_md(g.field)}", "", f"Section: {_md(g.section or '—')}", ""]
        head = "| edge | operation | input | verdict | findings · decisions | expected |" + (
            " target | agree |" if has_target else "")
        out += [head, "|" + "---|" * (head.count("|") - 1)]
        for c in g.cases:
            cells = [_md(c.edge), _md(c.operation), f"<code>{_md(_short(c.input))}</code>", _md(c.verdict),
                     _md(_why(c)), _md(c.expected)]
            if has_target:
                cells += [_md(c.actual or _unsent_cell(c)),
                          {True: "✓", False: "✗ **disagree**", None: "—"}[c.agree]]
            out.append("| " + " | ".join(cells) + " |")
        for c in g.cases:
            if c.agree is False and c.curl:
                out += ["", f"Reproduce ({_md(c.edge)}, {_md(c.operation)}):", "", *_fenced(printable(c.curl), "sh")]
    return "\n".join(out) + "\n"


def _md_unsent(result: Result) -> list[str]:
    """Sent and not sent: how many cases were not sent, each reason with its count, and what the two ways mean."""
    reasons = unsent(result)
    out = []
    if reasons:
        out += ["", "## Not sent", "", f"{sum(reasons.values())} cases were not sent to the target:", "",
                "| | why | cases |", "|---|---|---:|"]
        out += [f"| {how} | {_md(why)} | {n} |" for (how, why), n in reasons.items()]
        out += [""] + [f"- *{how}*: {meaning}" for how, meaning in UNSENT_MEANING.items()
                       if any(h == how for h, _w in reasons)]
    if result.left_out:
        out += ["", f"{len(result.left_out)} derived edges are left out: each breaks more than one rule, so its "
                "answer says nothing about one rule alone (report.json lists them)."]
    return out


def _md_not_exercised(result: Result) -> list[str]:
    """The Hypothesis searches the target gave nothing to search with (its cases are counted under "Not sent")."""
    searches = searches_not_exercised(result)
    if not searches:
        return []
    out = ["", "## Searches not exercised", "", "What the target lacked (sandbox data, an operation), refused (the "
           "valid control) or did not answer, so these searches sent nothing more:", ""]
    out += [f"- {len(pairs)} rule/kind pair(s) ({_md(', '.join(pairs))}): {_md(why)}"
            for why, pairs in searches.items()]
    return out


def _md(text: object) -> str:
    """Inline Markdown of a value: the characters it is, never markup (a target's ``<img onerror>``, ``|``, `` ` ``)."""
    return markdown_text(text)


def _fenced(text: str, language: str) -> list[str]:
    """A fenced code block of one printable line: its fence longer than any run of backticks in the text, so the
    text cannot close it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))
    return [fence + language, text, fence]


# ---------------------------------------------------------------------------------------------- HTML
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#17324d;color:#fff;padding:16px 24px}header h1{margin:0 0 4px;font-size:20px}
header p{margin:0;opacity:.85}main{padding:16px 24px}
.tools{position:sticky;top:0;background:#f6f7f9;padding:10px 0;z-index:2;display:flex;gap:16px;align-items:center}
.tools input[type=search]{font-size:15px;padding:6px 10px;width:360px;border:1px solid #9aa5b4;border-radius:6px}
.cards{display:flex;gap:12px;margin:8px 0 16px}.card{background:#fff;border-radius:8px;padding:10px 16px;
box-shadow:0 1px 2px #0002}.card b{display:block;font-size:22px}.bad b{color:#b3261e}.good b{color:#1e7b34}
table{border-collapse:collapse;background:#fff;width:100%;margin:6px 0 14px}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.n{text-align:right}code{font:12px ui-monospace,monospace;unicode-bidi:isolate;
word-break:break-all}section.group{background:#fff;border-radius:8px;margin:10px 0;padding:4px 14px;
box-shadow:0 1px 2px #0002}section.group h3{margin:8px 0 2px;font-size:15px}.section{color:#5b6575;font-size:12px}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;margin-left:6px}
.b-dis{background:#fde2e0;color:#8c1d18}.b-ok{background:#dff3e4;color:#1e5e2f}.b-nt{background:#e8ebf0}
tr.dis{background:#fff3f2}.v-refused{color:#8c1d18}.v-accepted{color:#1e5e2f}.v-accepted-with-warnings{color:#8a5a00}
.hidden{display:none}details pre{white-space:pre-wrap;font-size:11px;background:#f3f4f6;padding:6px}
svg text{font:11px system-ui,sans-serif}
"""

SCRIPT = """
(function(){
 var q=document.getElementById('q'),only=document.getElementById('only'),count=document.getElementById('shown');
 var given=new URLSearchParams(location.search);  // ?q=term&only=1: a link to a filtered view
 if(given.get('q'))q.value=given.get('q');if(given.get('only'))only.checked=true;
 function apply(){
  var term=q.value.trim().toLowerCase(),n=0;
  document.querySelectorAll('section.group').forEach(function(g){
   var rows=g.querySelectorAll('tbody tr'),any=false,gm=g.dataset.key.indexOf(term)>=0;
   rows.forEach(function(r){
    var show=(!only.checked||r.classList.contains('dis'))&&(!term||gm||r.textContent.toLowerCase().indexOf(term)>=0);
    r.classList.toggle('hidden',!show);if(show){any=true;n++;}
   });
   g.classList.toggle('hidden',!any);
  });
  count.textContent=n+' cases shown';
 }
 q.addEventListener('input',apply);only.addEventListener('change',apply);apply();
})();
"""


def _e(value: Any) -> str:
    return html_text(value)


def chart(rows: list[RuleRow], has_target: bool) -> str:
    """Horizontal stacked bars per rule: agree / disagree / not sent with a target; refused / accepted without."""
    bar_w, label_w, row_h = 520, 230, 20
    height = row_h * len(rows) + 30
    parts = [f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 230}" height="{height}" '
             f'role="img" aria-label="agreement per rule">']
    if has_target:
        legend = (("#2e8b57", "agree"), ("#c62828", "disagree"), ("#b8c0cc", "not sent"))
    else:
        legend = (("#c62828", "refused"), ("#2e8b57", "accepted"))
    x = label_w
    for color, name in legend:
        parts.append(f'<rect x="{x}" y="4" width="10" height="10" fill="{color}"/><text x="{x + 14}" y="13">{name}'
                     f'</text>')
        x += 90
    for i, r in enumerate(rows):
        y = 24 + i * row_h
        parts.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(r.rule)}</text>')
        if has_target:
            segments = ((r.agree, "#2e8b57"), (r.disagree, "#c62828"), (r.cases - r.sent, "#b8c0cc"))
        else:
            segments = ((r.refused, "#c62828"), (r.cases - r.refused, "#2e8b57"))
        x = float(label_w)
        for n, color in segments:
            w = bar_w * n / max(r.cases, 1)
            if w:
                parts.append(f'<rect class="seg" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 5}" '
                             f'fill="{color}"><title>{_e(r.rule)}: {n}</title></rect>')
            x += w
        label = share(r) if has_target else f"{r.cases} cases"
        parts.append(f'<text x="{label_w + bar_w + 6}" y="{y + 13}">{_e(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def page(result: Result) -> str:
    s = summary(result)
    has_target = result.target != "none"
    rows = rule_rows(result)
    title = f"Edge cases — target {result.target}"
    cards = [(s["cases"], "edge cases", ""), (s["rules"], "rules", ""), (s["refused"], "refused by the validator", "")]
    if has_target:
        cards += [(s["sent"], "sent", ""), (s["not_sent"], "not sent", ""), (s["agree"], "agree", "good"),
                  (s["disagree"], "disagree", "bad" if s["disagree"] else "good")]
    out = [f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
           f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{CSS}</style></head><body>',
           f"<header><h1>{_e(title)}</h1><p>today {_e(result.today)} (Europe/Oslo) · seed {result.seed} · "
           f"max examples {result.max_examples} · {result.seconds:.1f} s"
           + (f" · Hypothesis search: {result.searched} requests" if has_target else "")
           + (f" · fault switches: {_e(', '.join(result.faults))}" if result.faults else "")
           + ("" if has_target else " · no target: the contract as the validator reads it") + "</p>"
           + (f"<p>{_e(target_note(result))}</p>" if has_target else "") + "</header><main>",
           '<div class="cards">' + "".join(f'<div class="card {cls}"><b>{n}</b>{_e(label)}</div>'
                                           for n, label, cls in cards) + "</div>",
           "<h2>Agreement per rule</h2>" if has_target else "<h2>Verdicts per rule</h2>", chart(rows, has_target),
           '<h2>Summary</h2><table id="summary"><thead><tr><th>rule</th><th>cases</th><th>refused by the validator</th>'
           + ("<th>sent</th><th>not sent</th><th>agree</th><th>disagree</th><th>agreement</th>" if has_target else "")
           + "</tr></thead><tbody>"]
    for r in rows:
        out.append(f'<tr class="{"dis" if r.disagree else ""}"><td><a href="#{_e(_anchor(r.rule))}">{_e(r.rule)}</a>'
                   f'</td><td class="n">{r.cases}</td><td class="n">{r.refused}</td>'
                   + (f'<td class="n">{r.sent}</td><td class="n">{r.not_sent}</td><td class="n">{r.agree}</td>'
                      f'<td class="n">{r.disagree}</td><td>{_e(share(r))}</td>' if has_target else "") + "</tr>")
    out.append("</tbody></table>")
    reasons = unsent(result)
    if reasons:
        out.append(f'<h2>Not sent</h2><p>{sum(reasons.values())} cases were not sent to the target:</p>'
                   '<table id="unsent"><thead><tr><th></th><th>why</th><th>cases</th></tr></thead><tbody>'
                   + "".join(f'<tr><td>{_e(how)}</td><td>{_e(why)}</td><td class="n">{n}</td></tr>'
                             for (how, why), n in reasons.items()) + "</tbody></table><ul>"
                   + "".join(f"<li><b>{_e(how)}</b>: {_e(meaning)}</li>" for how, meaning in UNSENT_MEANING.items()
                             if any(h == how for h, _w in reasons)) + "</ul>")
    if result.left_out:
        out.append(f"<p>{len(result.left_out)} derived edges are left out: each breaks more than one rule, so its "
                   "answer says nothing about one rule alone (report.json lists them).</p>")
    searches_why = searches_not_exercised(result)
    if has_target and searches_why:
        out.append('<h2>Searches not exercised</h2><p>What the target lacked (sandbox data, an operation), refused '
                   '(the valid control) or did not answer, so these searches sent nothing more:</p>'
                   '<ul id="searches-not-exercised">'
                   + "".join(f"<li>{len(pairs)} rule/kind pair(s) ({_e(', '.join(pairs))}): {_e(why)}</li>"
                             for why, pairs in searches_why.items()) + "</ul>")
    # no autofocus: the page opens at its top (the counts, the chart, what was not sent), not at the search box
    out.append('<div class="tools"><input id="q" type="search" placeholder="Find a rule, field, section or value…">'
               '<label><input id="only" type="checkbox"> disagreements only</label><span id="shown"></span></div>')
    seen_rules: set[str] = set()
    for g in groups(result):
        anchor = "" if g.rule in seen_rules else f' id="{_e(_anchor(g.rule))}"'
        seen_rules.add(g.rule)
        key = f"{g.rule} {g.field} {g.section}".lower()
        badge = (f'<span class="badge b-dis">{g.disagree} disagree</span>' if g.disagree else
                 f'<span class="badge b-ok">{g.agree} agree</span>' if g.agree else
                 f'<span class="badge b-nt">{len(g.cases)} cases</span>')
        out.append(f'<section class="group" data-key="{_e(key)}"{anchor}><h3>{_e(g.rule)} · {_e(g.field)}{badge}</h3>'
                   f'<div class="section">{_e(g.section or "—")}</div><table><thead><tr><th>edge</th>'
                   "<th>operation</th><th>input</th><th>validator</th><th>expected</th>"
                   + ("<th>target</th><th></th>" if has_target else "")
                   + "</tr></thead><tbody>")
        for c in g.cases:
            cls = "dis" if c.agree is False else ""
            verdict = f'<span class="v-{c.verdict.replace(" ", "-")}">{_e(c.verdict)}</span><br><small>{_e(_why(c))}</small>'
            cells = [_e(c.edge), _e(c.operation), f"<code>{_e(_short(c.input))}</code>", verdict, _e(c.expected)]
            if has_target:
                actual = _e(c.actual) if c.actual else f"<small>{_e(_unsent_cell(c))}</small>"
                if c.curl and c.agree is False:  # an agreeing case's curl is in report.json: the page stays small
                    actual += f"<details><summary>curl</summary><pre>{_e(c.curl)}</pre></details>"
                cells += [actual, {True: "✓", False: "✗", None: ""}[c.agree]]
            out.append(f'<tr class="{cls}">' + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
        out.append("</tbody></table></section>")
    out.append(f"</main><script>{SCRIPT}</script></body></html>")
    return "\n".join(out)


def _anchor(rule: str) -> str:
    return "rule-" + "".join(ch if ch.isalnum() else "-" for ch in rule)
