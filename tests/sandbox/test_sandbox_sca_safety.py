"""A37 on the sandbox (issue 21, point 10): only https (and http to a loopback host) are redirect targets, refused
where the payment or authorisation is created; the SCA page cannot be framed and takes no forged form."""
from __future__ import annotations

from urllib.parse import urlencode

import pytest

from conformance.gate.suites.stateful import hidden_fields
from conformance.mutations import UNSAFE_REDIRECTS
from conformance.sandbox.sca import CSRF_COOKIE, CSRF_FIELD, FIELD, FORGED_STATUS
from flows import EUR, REDIRECT, SEPA, SESSION, sca, sepa_body, start, status
from flows import sepa as create_sepa
from validator.request.headers import unsafe_redirect
from validator.spec import load_spec

# The six: each was followed with a 303 carrying psu-id before A37.
REPORTED = ("javascript:alert(document.cookie)", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "vbscript:msgbox(1)", "file:///etc/passwd", "http://tpp.example.no/callback", "https:no-host")
SAFE = ("https://tpp.example.no/callback?state=1", "HTTPS://TPP.EXAMPLE.NO/cb", "http://127.0.0.1:8000/cb",
        "http://localhost/cb", "http://[::1]:9000/cb", "http://127.1.2.3/cb", "http://127.0.0.1:22/")
TARGET = next(p for p in load_spec().operation("startPaymentAuthorisation").header_parameters
              if p.key == "tpp-redirect-uri").raw["x-redirect-target"]


def _start(client, pid: str, redirect: str):
    return client.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid},
                       headers={"TPP-Redirect-URI": redirect, "TPP-Session-ID": SESSION})


def test_the_rule_judges_by_the_spec_s_redirect_target():
    for value in REPORTED + UNSAFE_REDIRECTS:
        assert unsafe_redirect(TARGET, value), value
    for value in SAFE:
        assert unsafe_redirect(TARGET, value) is None, value


@pytest.mark.parametrize("redirect", REPORTED)
def test_an_unsafe_redirect_is_refused_when_the_authorisation_starts(tpp, redirect):
    pid = create_sepa(tpp)
    r = _start(tpp, pid, redirect)
    assert r.status_code == 400, r.text
    message = r.json()["tppMessages"][0]
    assert message["code"] == "FORMAT_ERROR" and message["path"] == "/headers/TPP-Redirect-URI", message
    assert "A37" in message["text"]
    assert status(tpp, pid)["transactionStatus"] == "RCVD"  # nothing started: no page to send a browser from


def test_an_unsafe_redirect_is_refused_when_the_payment_is_created(tpp):
    r = tpp.call("createSepaCreditTransfer", body=sepa_body("10.00"), headers={"TPP-Redirect-URI": "javascript:alert(1)"})
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "FORMAT_ERROR", r.text


@pytest.mark.parametrize("redirect", ["http://127.0.0.1:8000/callback?state=x", "https://tpp.example.no/cb"])
def test_https_and_loopback_http_are_redirect_targets(tpp, browser, redirect):
    pid = create_sepa(tpp)
    started = _start(tpp, pid, redirect)
    assert started.status_code == 201, started.text
    page = browser.get(started.json()["_links"]["scaRedirect"]["href"])
    action = page.text.split('action="', 1)[1].split('"', 1)[0]
    answer = browser.post(action, content=urlencode([*hidden_fields(page.text), (FIELD, EUR["customerNumber"])]),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 303 and answer.headers["location"].startswith(redirect.split("?")[0])


# ---------------------------------------------------------------- the page: no framing, no forged form
def test_the_sca_page_cannot_be_framed_or_cached(tpp, browser):
    pid = create_sepa(tpp)
    page = browser.get(start(tpp, pid)["_links"]["scaRedirect"]["href"])
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store" and page.headers["referrer-policy"] == "no-referrer"
    cookie = page.headers["set-cookie"]
    assert cookie.startswith(f"{CSRF_COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie, cookie
    assert "/sca/" in cookie  # the authorisation's own path, no other page gets it
    assert [name for name, _value in hidden_fields(page.text)] == [CSRF_FIELD]


def _page_and_action(tpp, browser):
    pid = create_sepa(tpp)
    started = start(tpp, pid)
    page = browser.get(started["_links"]["scaRedirect"]["href"])
    return pid, started, page, page.text.split('action="', 1)[1].split('"', 1)[0]


def _post(client, action: str, fields: list[tuple[str, str]]):
    return client.post(action, content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})


def test_a_form_without_the_token_changes_nothing(tpp, browser):
    pid, started, _page, action = _page_and_action(tpp, browser)
    answer = _post(browser, action, [(FIELD, EUR["customerNumber"])])
    assert answer.status_code == FORGED_STATUS and "location" not in answer.headers
    assert answer.headers["x-frame-options"] == "DENY"
    assert status(tpp, pid)["transactionStatus"] == "RCVD"
    authorisation = tpp.call("getPaymentAuthorisationStatus",
                             path={**SEPA, "paymentId": pid, "authorisationId": started["authorisationId"]})
    assert authorisation.json() == {"scaStatus": "started"}


def test_a_token_from_another_browser_or_a_wrong_token_is_refused(tpp, browser, server):
    import httpx

    pid, _started, page, action = _page_and_action(tpp, browser)
    token = dict(hidden_fields(page.text))[CSRF_FIELD]
    with httpx.Client(base_url=server.url, follow_redirects=False) as other_site:  # no cookie of the page
        assert _post(other_site, action, [(CSRF_FIELD, token), (FIELD, EUR["customerNumber"])]).status_code == 403
    assert _post(browser, action, [(CSRF_FIELD, "0" * 64), (FIELD, EUR["customerNumber"])]).status_code == 403
    assert status(tpp, pid)["transactionStatus"] == "RCVD"
    answer = _post(browser, action, [(CSRF_FIELD, token), (FIELD, EUR["customerNumber"])])  # the page's own
    assert answer.status_code == 303 and "psu-id=" in answer.headers["location"]
    assert status(tpp, pid)["transactionStatus"] == "PDNG"


def test_the_shared_walk_sends_the_token(tpp, browser):
    pid = create_sepa(tpp)
    assert "psu-id" in sca(browser, start(tpp, pid), EUR["customerNumber"])
    assert REDIRECT.startswith("https://")
