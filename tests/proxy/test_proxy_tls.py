"""``obvalidate proxy`` in front of an https upstream that asks for the TPP's TLS client certificate (a bank's
sandbox or staging): the certificate and the CAs trusted for the upstream (``--tls-cert/--tls-key``, ``--ca-bundle``)
on the proxy's connections to it; without the certificate the upstream refuses and the client gets the proxy's 502."""
from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from conformance.gate.tls import TlsOptions
from conformance.sandbox.serving import ServerTls
from conformance.server_process import SandboxProcess
from proxy_helpers import RunningProxy
from tls_material import material

STATUS = "/v1/payments/sepa-credit-transfers/no-such-payment/status"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return material(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def bank(pki, tmp_path_factory):
    """The sandbox over HTTPS, a client certificate of the test CA required."""
    where = tmp_path_factory.mktemp("bank")
    server = SandboxProcess(where / "bank.db", log=where / "bank.log",
                            tls=ServerTls(str(pki.server_cert), str(pki.server_key), str(pki.ca.cert))).start()
    yield server
    server.stop()


def test_the_client_certificate_goes_upstream_and_the_bank_answers(pki, bank):
    context = TlsOptions(str(pki.client_cert), str(pki.client_key), str(pki.ca.cert)).context()
    with RunningProxy(bank.url, ssl_context=context) as proxy:
        answer = httpx.get(proxy.url + STATUS, timeout=10)
    assert answer.status_code in (400, 401, 403, 404)   # the bank's own refusal of an unsigned request
    assert "SYSTEM_ERROR" not in answer.text


def test_without_the_client_certificate_the_bank_refuses_and_the_client_gets_502(pki, bank):
    with RunningProxy(bank.url, ssl_context=TlsOptions(ca_bundle=str(pki.ca.cert)).context()) as proxy:
        answer = httpx.get(proxy.url + STATUS, timeout=10)
        tally = proxy.stop()
    assert answer.status_code == 502 and answer.json()["tppMessages"][0]["code"] == "SYSTEM_ERROR"
    assert tally.findings["server"] == 1
    text = answer.json()["tppMessages"][0]["text"]   # the TLS error, named: what the TPP's operator must fix
    assert "TLS" in text and "client certificate" in text and "--tls-cert" in text, text


@pytest.mark.parametrize("arguments, message", [
    (["--upstream", "http://127.0.0.1:9", "--tls-cert", "c.pem", "--tls-key", "k.pem"], "for an https:// upstream"),
    (["--upstream", "https://127.0.0.1:9", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
    (["--upstream", "https://127.0.0.1:9", "--ca-bundle", "missing.pem"], "missing.pem"),
])
def test_tls_options_that_cannot_be_used_exit_2_with_the_reason(arguments, message, tmp_path):
    run = subprocess.run([sys.executable, "-m", "validator", "proxy", "--port", "0", *arguments],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
