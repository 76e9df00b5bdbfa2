"""The SCA page (A24) in a real headless browser (issue 9, must-show 1).

A TPP creates a payment and starts its authorisation against a sandbox server process; the PSU's browser — Debian's
Chromium, headless, driven through the DevTools protocol — opens ``_links.scaRedirect``, sees what it authorises,
types the customerNumber and clicks "Authorise"; the sandbox redirects it to the TPP-Redirect-URI (a loopback HTTP
server standing in for the TPP) with ``psu-id`` and ``tpp-session-id``, and the payment is ``PDNG``. A screenshot of
the form is saved in the test's tmp dir and checked: the viewport size, far from blank, the page's button colour.
"""
from __future__ import annotations

import http.server
import io
import threading
import time
from urllib.parse import parse_qs, urlsplit

import httpx
from PIL import Image

from conformance.client import SignedClient
from conformance.gate.suites.stateful import hidden_fields
from conformance.sandbox import testdata
from conformance.sandbox.sca import CSRF_FIELD
from headless_chromium import Chromium, chromium_executable

SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
SESSION = "5b0e3c7a-2d4f-4a1b-9c8d-7e6f5a4b3c2d"
CREDITOR = "Ingrid Hansen Immobilien GmbH"
WIDTH, HEIGHT = 1000, 800
BUTTON_BLUE = (0x0B, 0x5C, 0xAD)  # the SCA page's "Authorise" button (conformance/sandbox/sca.py)


class LoopbackSite:
    """A site of its own origin (a loopback port) for the browser: ``page(path)`` is the HTML it serves at a path,
    ``visited(path)`` hears of every page asked for but the favicon (the browser asks for it by itself)."""

    def __init__(self) -> None:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
                if self.path != "/favicon.ico":
                    site.visited(self.path)
                page = site.page(self.path).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def page(self, path: str) -> str:
        return "<!doctype html><title>Plain</title><p>A plain page.</p>"

    def visited(self, path: str) -> None:
        pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class TppCallback(LoopbackSite):
    """The TPP's redirect target: records the address the browser arrives at."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[str] = []
        self.reached = threading.Event()

    def page(self, path: str) -> str:
        return "<!doctype html><title>TPP</title><p>Back at the TPP.</p>"

    def visited(self, path: str) -> None:
        self.arrived.append(path)
        self.reached.set()


def _eur_payment(amount: str, debtor: dict) -> dict:
    """A SEPA credit transfer of ``amount`` EUR from the sandbox account ``debtor`` to CREDITOR."""
    return {"instructedAmount": {"amount": amount, "currency": "EUR"}, "creditorName": CREDITOR,
            "creditorAccount": {"iban": "DE89370400440532013000", "currency": "EUR"},
            "debtorAccount": {"iban": debtor["iban"], "currency": "EUR"}}


def rendered_form_problems(png: bytes) -> list[str]:
    """What says the screenshot is not the rendered form: wrong size, (nearly) one colour, no button."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    problems = []
    if image.size != (WIDTH, HEIGHT):
        problems.append(f"size {image.size}, not the viewport {(WIDTH, HEIGHT)}")
    colours = image.getcolors(maxcolors=WIDTH * HEIGHT)
    most = max(count for count, _colour in colours)
    if len(colours) < 50 or most > 0.97 * WIDTH * HEIGHT:
        problems.append(f"nearly blank: {len(colours)} colours, the commonest on {most} pixels")
    blue = sum(count for count, colour in colours if all(abs(c - b) <= 8 for c, b in zip(colour, BUTTON_BLUE)))
    if blue < 500:
        problems.append(f"the Authorise button's blue is on {blue} pixels only")
    return problems


def test_psu_authorises_a_payment_in_headless_chromium(serve, identities, tmp_path):
    executable = chromium_executable()
    server = serve("sca")
    debtor = testdata.EUR_ACCOUNT
    body = {**_eur_payment("1234.50", debtor), "remittanceInformationUnstructured": "Husleie desember"}
    with TppCallback() as tpp_site, SignedClient(server.url, identities["A"]) as tpp:
        created = tpp.call("createSepaCreditTransfer", body=body)
        assert created.status_code == 201, created.text
        payment = {**SEPA, "paymentId": created.json()["paymentId"]}
        started = tpp.call("startPaymentAuthorisation", path=payment,
                           headers={"TPP-Redirect-URI": f"{tpp_site.url}/return?state=sca-browser",
                                    "TPP-Session-ID": SESSION})
        assert started.status_code == 201, started.text
        sca_page = started.json()["_links"]["scaRedirect"]["href"]

        with Chromium(executable, tmp_path / "chromium-profile", log=tmp_path / "chromium.log") as browser:
            page = browser.new_page(width=WIDTH, height=HEIGHT)
            page.navigate(sca_page)
            form = page.evaluate("""(() => { const f = document.querySelector('form');
                return f && {method: f.method, action: f.action, fields: [...f.elements].filter(e => e.type !== 'hidden')
                             .map(e => e.name).filter(Boolean),
                             title: document.title, text: document.body.innerText}; })()""")
            assert form, "the SCA page has no form"
            assert form["method"] == "post" and form["fields"] == ["customerNumber"], form
            assert form["action"].startswith(server.url), form["action"]
            for shown in ("1234.50 EUR", CREDITOR, debtor["iban"], "DE89370400440532013000", "Husleie desember"):
                assert shown in form["text"], f"{shown!r} is not on the SCA page"
            png = page.screenshot(tmp_path / "sca-form.png")
            assert not rendered_form_problems(png), rendered_form_problems(png)

            page.type_text("input[name=customerNumber]", debtor["customerNumber"])
            assert page.evaluate("document.querySelector('input[name=customerNumber]').value") == debtor["customerNumber"]
            page.click("button[type=submit]")
            landed = page.wait_for_url(tpp_site.url)
            assert "Back at the TPP." in page.evaluate("document.body.innerText")

        assert tpp_site.reached.is_set() and len(tpp_site.arrived) == 1, tpp_site.arrived
        query = parse_qs(urlsplit(landed).query)
        assert urlsplit(landed).path == "/return" and query["state"] == ["sca-browser"], landed
        assert query["tpp-session-id"] == [SESSION] and query["psu-id"][0], landed
        assert "message" not in query, query["message"]

        status = tpp.call("getPaymentStatus", path=payment)
        assert status.json()["transactionStatus"] == "PDNG", status.text
        authorisation = tpp.call("getPaymentAuthorisationStatus",
                                 path={**payment, "authorisationId": started.json()["authorisationId"]})
        assert authorisation.json() == {"scaStatus": "finalised"}, authorisation.text


# ---------------------------------------------------------------- A37: no framing, no forged form (issue 21, point 10)
class AnotherSite(LoopbackSite):
    """A site of another origin serving the pages of ``pages`` by path."""

    def __init__(self, pages: dict[str, str]) -> None:
        super().__init__()
        self.pages = pages

    def page(self, path: str) -> str:
        return self.pages.get(path) or super().page(path)


def _frames(page) -> dict[str, dict]:
    """The page's child frames by name: what Chromium loaded in each."""
    tree = page.send("Page.getFrameTree")["frameTree"]
    return {child["frame"].get("name", ""): child["frame"] for child in tree.get("childFrames", ())}


def test_the_sca_page_is_not_shown_in_another_site_s_frame_nor_takes_its_form(serve, identities, tmp_path):
    executable = chromium_executable()
    server = serve("sca-frames")
    debtor = testdata.EUR_ACCOUNT
    body = _eur_payment("99.00", debtor)
    pages: dict[str, str] = {}
    with AnotherSite(pages) as site, SignedClient(server.url, identities["A"]) as tpp:
        created = tpp.call("createSepaCreditTransfer", body=body)
        payment = {**SEPA, "paymentId": created.json()["paymentId"]}
        started = tpp.call("startPaymentAuthorisation", path=payment,
                           headers={"TPP-Redirect-URI": f"{site.url}/return", "TPP-Session-ID": SESSION})
        sca_page = started.json()["_links"]["scaRedirect"]["href"]
        # the other site frames the SCA page next to one of its own pages (the control: frames load there)
        pages["/framing"] = (f'<!doctype html><iframe name="sca" src="{sca_page}"></iframe>'
                             f'<iframe name="own" src="{site.url}/plain"></iframe>')
        # and submits the SCA form from its page with a token it got by reading the page itself (its own cookie)
        with httpx.Client(follow_redirects=False) as attacker:
            token = dict(hidden_fields(attacker.get(sca_page).text))[CSRF_FIELD]
        pages["/forge"] = (f'<!doctype html><form method="post" action="{sca_page}">'
                           f'<input type="hidden" name="{CSRF_FIELD}" value="{token}">'
                           f'<input name="customerNumber" value="{debtor["customerNumber"]}"></form>'
                           "<script>document.forms[0].submit()</script>")

        with Chromium(executable, tmp_path / "chromium-profile", log=tmp_path / "chromium.log") as browser:
            page = browser.new_page(width=WIDTH, height=HEIGHT)
            page.navigate(site.url + "/framing")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not {"sca", "own"} <= set(_frames(page)):
                time.sleep(0.05)
            frames = _frames(page)
            assert frames["own"]["url"] == f"{site.url}/plain", frames["own"]  # a frame loads where allowed
            assert frames["sca"]["url"].startswith("chrome-error:"), frames["sca"]  # frame-ancestors 'none'
            assert frames["sca"].get("unreachableUrl") == sca_page, frames["sca"]

            page.navigate(sca_page)  # the PSU has the page open: its cookie is in the browser
            page.navigate(site.url + "/forge")
            page.wait_for_url(sca_page)
            assert "not sent from the authorisation page" in page.evaluate("document.body.innerText")

        assert tpp.call("getPaymentStatus", path=payment).json()["transactionStatus"] == "RCVD"
        authorisation = tpp.call("getPaymentAuthorisationStatus",
                                 path={**payment, "authorisationId": started.json()["authorisationId"]})
        assert authorisation.json() == {"scaStatus": "started"}, authorisation.text
