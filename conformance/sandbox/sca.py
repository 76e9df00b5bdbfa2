"""The SCA page of the sandbox (A24): where the PSU's browser goes from ``_links.scaRedirect``.

Not an API operation (no signature, not in the spec's paths). ``GET`` shows what is being authorised and a form
(method POST) with one field, ``customerNumber``; ``POST`` of that form answers 303 (302 when the profile says
``sca-redirect-status: 302``) to the TPP-Redirect-URI the
authorisation was started with, adding ``psu-id`` and ``tpp-session-id`` to its query on success, or ``message``
on failure.

A37: the page cannot be framed (its ``x-sca-page`` headers: CSP ``frame-ancestors 'none'``, X-Frame-Options), and
its form carries an anti-CSRF token bound to a cookie set with the page (HttpOnly, SameSite=Strict, the
authorisation's path only): a POST without both is answered 403 and changes nothing.
"""
from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from validator.spec import load_spec

from .domain import Refused, format_amount
from .lifecycle import SCA_STARTED, entries
from .wire import read_body

PAGE_PREFIX = "/sca"
FORM_LIMIT = 64 * 1024
FIELD = load_spec().document["x-sca-page"]["post"]["fields"][0]  # customerNumber (A24)
REDIRECT_STATUS = load_spec().document["x-sca-page"]["post"]["status"]  # 303 (A24)
PAGE_HEADERS = dict(load_spec().document["x-sca-page"]["get"]["headers"])  # no framing, no caching (A37)
CSRF_FIELD = load_spec().document["x-sca-page"]["get"]["hidden-fields"][0]  # csrf (A37)
FORGED_STATUS = load_spec().document["x-sca-page"]["post"]["forged-status"]  # 403 (A37)
CSRF_COOKIE = "obvalidate-sca"
NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
# The key of the anti-CSRF tokens: the server process's own (a restart asks the PSU to open the link again).
_CSRF_KEY = secrets.token_bytes(32)

_STYLE = """
body{font-family:system-ui,sans-serif;background:#f3f5f8;color:#1d2733;margin:0}
main{max-width:68rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem 2.5rem;box-shadow:0 2px 12px #0002}
h1{font-size:1.4rem;margin:0 0 .25rem}p.lead{color:#56606b;margin:0 0 1.5rem}
table{width:100%;border-collapse:collapse;margin-bottom:1.5rem}
th,td{text-align:left;padding:.45rem .3rem;border-bottom:1px solid #e3e7ec;font-size:.95rem}
th.amount,td.amount{text-align:right;font-variant-numeric:tabular-nums}td{white-space:nowrap}td.name{white-space:normal}
label{display:block;font-weight:600;margin-bottom:.4rem}
input{font-size:1.1rem;padding:.55rem .7rem;width:14rem;border:1px solid #9aa5b1;border-radius:6px}
button{font-size:1.05rem;padding:.6rem 1.4rem;margin-left:.6rem;background:#0b5cad;color:#fff;border:0;border-radius:6px}
.note{color:#56606b;font-size:.85rem;margin-top:1.5rem}.state{font-weight:600;color:#8a1c1c}
"""


def with_query(uri: str, params: dict[str, str]) -> str:
    """``uri`` with ``params`` added to its query (existing parameters kept)."""
    parts = urlsplit(uri)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def parse_form(body: bytes) -> dict[str, str]:
    """An application/x-www-form-urlencoded body (first value of each name)."""
    out: dict[str, str] = {}
    for name, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        out.setdefault(name, value)
    return out


def _amount(amount: dict) -> str:
    try:
        return f"{format_amount(amount['amount'], amount['currency'], load_spec().minor_units)} {amount['currency']}"
    except (KeyError, TypeError, ArithmeticError):
        return f"{amount.get('amount', '')} {amount.get('currency', '')}"


def remittance(entry: dict) -> str:
    """What the creditor is told (A24: shown to the PSU): the unstructured text, else the structured references
    (a KID or other creditor reference, with its type when given)."""
    if entry.get("remittanceInformationUnstructured"):
        return str(entry["remittanceInformationUnstructured"])
    structured = entry.get("remittanceInformationStructuredArray") or [entry.get("remittanceInformationStructured")]
    shown = []
    for ref in structured:
        if isinstance(ref, dict) and ref.get("reference"):
            kind = ref.get("referenceType")
            shown.append(f"{ref['reference']} ({kind})" if kind else str(ref["reference"]))
    return ", ".join(shown)


def _rows(payments: list[dict]) -> str:
    rows = []
    for p in payments:
        body = json.loads(p["body"])
        debtor = body.get("debtorAccount", {})
        for e in entries(body):
            creditor = e.get("creditorAccount", {})
            amount = e.get("instructedAmount", {})
            cells = (("name", e.get("creditorName", "")), ("", creditor.get("iban") or creditor.get("bban", "")),
                     ("", debtor.get("iban") or debtor.get("bban", "")), ("name", remittance(e)),
                     ("", e.get("endToEndIdentification", "")),
                     ("", body.get("requestedExecutionDate") or body.get("startDate") or "first batch run"),
                     ("amount", _amount(amount)))
            rows.append("<tr>" + "".join(f'<td class="{kind}">{html.escape(str(value))}</td>' if kind
                                         else f"<td>{html.escape(str(value))}</td>" for kind, value in cells) + "</tr>")
    return "\n".join(rows)


def csrf_token(token: str, nonce: str) -> str:
    """The form's anti-CSRF token for the authorisation ``token`` and the browser's cookie ``nonce``: a keyed hash,
    so only the page this server gave that browser carries it."""
    return hmac.new(_CSRF_KEY, f"{token}.{nonce}".encode("utf-8"), hashlib.sha256).hexdigest()


def csrf_ok(token: str, nonce: str | None, sent: str | None) -> bool:
    return bool(nonce and sent) and hmac.compare_digest(csrf_token(token, nonce), sent)


def render(authorisation: dict, payments: list[dict], nothing_to_authorise: str | None = None, csrf: str = "") -> str:
    """The page; ``nothing_to_authorise``: why completing it would authorise nothing (A35), said above the form, which
    still sends the PSU back to the TPP (with message); ``csrf``: the form's anti-CSRF token (A37)."""
    count = sum(len(entries(json.loads(p["body"]))) for p in payments)
    what = "a signing basket" if authorisation["subject_kind"] == "basket" else "a payment"
    if authorisation["sca_status"] == SCA_STARTED:
        note = (f'<p class="state">Nothing left to authorise: {html.escape(nothing_to_authorise)}. Submitting returns '
                'you to the TPP.</p>') if nothing_to_authorise else ""
        form = (f'{note}<form method="post" action="{PAGE_PREFIX}/{html.escape(authorisation["token"])}">'
                f'<input type="hidden" name="{CSRF_FIELD}" value="{html.escape(csrf)}">'
                f'<label for="{FIELD}">Customer number (customerNumber of a sandbox customer)</label>'
                f'<input id="{FIELD}" name="{FIELD}" inputmode="numeric" autocomplete="off" required autofocus>'
                '<button type="submit">Authorise</button></form>')
    else:
        form = f'<p class="state">This authorisation is {html.escape(authorisation["sca_status"])}.</p>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox SCA – authorise {what}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>{_STYLE}</style></head>
<body><main>
<h1>Authorise {what}</h1>
<p class="lead">{count} credit transfer{'s' if count != 1 else ''} for the TPP to execute.</p>
<table><thead><tr><th>Creditor</th><th>Creditor account</th><th>Debtor account</th><th>Remittance</th><th>End-to-end id</th><th>Execution date</th><th class="amount">Amount</th></tr></thead>
<tbody>
{_rows(payments)}
</tbody></table>
{form}
<p class="note">Sandbox: the customerNumber identifies the PSU (Authentication › PSU authentication). The customer must own
the debtor account and have the funds.</p>
</main></body></html>"""


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status, headers=PAGE_HEADERS)


def _page(sandbox, token: str, nonce: str, secure: bool) -> Response:
    with sandbox.store.snapshot() as tx:
        try:
            authorisation = sandbox.lifecycle.authorisation_by_token(tx, token)
        except Refused as refused:
            return _html(f"<!doctype html><title>Unknown</title><p>{html.escape(refused.text)}</p>", 404)
        payments = sandbox.lifecycle.sca_payments(tx, authorisation)
        page = _html(render(authorisation, payments, sandbox.lifecycle.nothing_to_authorise(tx, authorisation, payments),
                            csrf_token(token, nonce)))
    page.set_cookie(CSRF_COOKIE, nonce, path=f"{PAGE_PREFIX}/{token}", httponly=True, samesite="strict", secure=secure)
    return page


def _submit(sandbox, token: str, body: bytes, nonce: str | None) -> Response:
    form = parse_form(body)
    if not csrf_ok(token, nonce, form.get(CSRF_FIELD)):  # A37: not submitted from the page this browser opened
        return _html("<!doctype html><title>Not accepted</title><p>This form was not sent from the authorisation "
                     "page opened in this browser. Open the authorisation link again.</p>", FORGED_STATUS)
    number = form.get(FIELD, "")
    with sandbox.store.transaction() as tx:
        try:
            authorisation = sandbox.lifecycle.authorisation_by_token(tx, token)
        except Refused as refused:
            return _html(f"<!doctype html><title>Unknown</title><p>{html.escape(refused.text)}</p>", 404)
        try:
            ok, message, psu_id = sandbox.lifecycle.complete_sca(tx, authorisation, number)
        except Refused as refused:
            ok, message, psu_id = False, refused.text, None
    params = {"psu-id": psu_id, "tpp-session-id": authorisation["session_id"]} if ok else {"message": message}
    status = sandbox.profile.sca_redirect_status or REDIRECT_STATUS  # A24: the profile's choice, else the spec's
    return RedirectResponse(with_query(authorisation["redirect_uri"], params), status_code=status)


async def page(request: Request) -> Response:
    sandbox = request.app.state.sandbox
    token = request.path_params["token"]
    if request.method == "POST":
        body = await read_body(request, FORM_LIMIT)
        if body is None:
            return _html("<!doctype html><title>Too large</title><p>The form is too large.</p>", 400)
        return await run_in_threadpool(_submit, sandbox, token, body, request.cookies.get(CSRF_COOKIE))
    nonce = request.cookies.get(CSRF_COOKIE, "")  # one per browser and authorisation
    if not NONCE.fullmatch(nonce):
        nonce = secrets.token_urlsafe(18)
    return await run_in_threadpool(_page, sandbox, token, nonce, request.url.scheme == "https")


ROUTES = [Route(PAGE_PREFIX + "/{token}", page, methods=["GET", "POST"])]
