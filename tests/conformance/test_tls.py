"""The gate over TLS, as a bank's PSD2 host serves it: the reference sandbox over HTTPS requiring a TLS client
certificate from a test CA (made here with ``cryptography``), reached with ``--tls-cert/--tls-key`` and
``--ca-bundle``. A clean run; each TLS mistake ends the run with exit 2 and one message naming it, never findings;
``--insecure`` warns and the report records it; ``HTTPS_PROXY`` tunnels the run and ``NO_PROXY`` keeps it direct."""
from __future__ import annotations

import asyncio
import json
import pickle
import socket
import ssl
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from conformance.gate.cli import conform
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import TlsFailure
from conformance.gate.target import ReferenceServer, reachable
from conformance.gate.tls import TlsConfigError, TlsOptions
from conformance.sandbox.serving import ServerTls
from gate_helpers import LoopbackServer, pipe
from tls_material import material

# a Schemathesis check (the requests adapter), signed clients, and the SCA page's browser (stateful:lifecycle)
QUICK_CHECKS = "schema:generated-requests,security:unsigned,stateful:lifecycle"
REQUIRED = "TLS: the target requires a client certificate (--tls-cert/--tls-key)"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return material(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def mtls(pki):
    """The sandbox over HTTPS, requiring a client certificate of the test CA (a fresh one per test: a run's
    payments are in its books)."""
    server = ReferenceServer(tls=ServerTls(str(pki.server_cert), str(pki.server_key), str(pki.ca.cert))).start()
    yield server
    server.stop()


def client_options(pki) -> list[str]:
    return ["--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key)]


def gate(url: str, *options: str, checks: str = QUICK_CHECKS):
    return CliRunner().invoke(conform, ["--target", url, "--max-examples", "1", "--check", checks, *options])


def refused(result, message: str) -> None:
    """Exit 2 with ``message`` on one line, and nothing else: no finding, no report, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output[-3000:])
    assert f"Error: {message}" in result.output, result.output[-3000:]
    assert "FAIL" not in result.output and "Traceback" not in result.output and "findings" not in result.output
    assert result.output.count("TLS:") == 1, result.output


# ---------------------------------------------------------------- the right certificates: a clean run
def test_the_gate_over_mutual_tls_is_clean(pki, mtls):
    assert mtls.url.startswith("https://")
    result = gate(mtls.url, *client_options(pki), "--ca-bundle", str(pki.ca.cert), "--format", "json")
    assert result.exit_code == 0, result.output[-3000:]
    report = json.loads(result.output[result.output.index("{"):])
    assert report["summary"]["findings"] == 0 and report["summary"]["failed"] == 0, report["summary"]
    passed = {o["check"] for o in report["outcomes"] if o["status"] == "passed"}
    assert set(QUICK_CHECKS.split(",")) <= passed, report["outcomes"]
    assert report["run"]["tls"] == {"client_certificate": str(pki.client_cert), "ca_bundle": str(pki.ca.cert),
                                    "verified": True}


def test_the_worker_processes_connect_with_the_same_certificates(pki, mtls):
    result = gate(mtls.url, *client_options(pki), "--ca-bundle", str(pki.ca.cert), "--workers", "2",
                  checks="security:unsigned,stateful:lifecycle")
    assert result.exit_code == 0, result.output[-3000:]
    assert " 0 findings" in result.output


# ---------------------------------------------------------------- each mistake: exit 2 and its message
def test_no_client_certificate(pki, mtls):
    refused(gate(mtls.url, "--ca-bundle", str(pki.ca.cert)), REQUIRED)


def test_a_client_certificate_of_another_ca(pki, mtls):
    result = gate(mtls.url, "--tls-cert", str(pki.stranger_cert), "--tls-key", str(pki.stranger_key),
                  "--ca-bundle", str(pki.ca.cert))
    refused(result, "TLS: the target does not accept the client certificate CN=stranger (issued by CN=other-ca)")


def test_an_untrusted_server_certificate_without_the_ca_bundle(pki, mtls):
    refused(gate(mtls.url, *client_options(pki)),
            "TLS: the target's certificate is not trusted: unknown CA (issued by CN=test-ca) "
            "(--ca-bundle FILE, or --insecure)")


def test_a_certificate_for_another_host_name(pki):
    server = ReferenceServer(tls=ServerTls(str(pki.elsewhere_cert), str(pki.elsewhere_key))).start()
    try:
        refused(gate(server.url, "--ca-bundle", str(pki.ca.cert)),
                "TLS: the certificate is for bank.example, not 127.0.0.1")
    finally:
        server.stop()


def test_https_to_a_port_without_tls():
    server = ReferenceServer().start()
    try:
        refused(gate(server.url.replace("http://", "https://")),
                f"TLS: 127.0.0.1:{server.port} does not speak TLS (is it http://, not https://?)")
    finally:
        server.stop()


class AlertingServer:
    """A TLS server requiring a client certificate of ``ca`` that, as nginx or Envoy do, says why it refuses one with
    a TLS alert (certificate required, unknown CA) before closing; it answers a certificate it accepts with 404."""

    def __init__(self, pki) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki.ca.cert))
        self.context.load_cert_chain(str(pki.server_cert), str(pki.server_key))
        self.context.verify_mode = ssl.CERT_REQUIRED
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"https://127.0.0.1:{self.port}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(raw,), daemon=True).start()

    def _connection(self, raw: socket.socket) -> None:
        raw.settimeout(5)
        try:
            with self.context.wrap_socket(raw, server_side=True) as tls:
                tls.recv(4096)
                tls.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:  # the handshake refused the client's certificate: OpenSSL has sent its alert
            raw.close()

    def stop(self) -> None:
        self.listener.close()


@pytest.fixture
def alerting(pki):
    server = AlertingServer(pki)
    yield server
    server.stop()


def test_a_target_saying_why_with_a_tls_alert(pki, alerting):
    refused(gate(alerting.url, "--ca-bundle", str(pki.ca.cert)), REQUIRED)
    refused(gate(alerting.url, "--tls-cert", str(pki.stranger_cert), "--tls-key", str(pki.stranger_key),
                 "--ca-bundle", str(pki.ca.cert)),
            "TLS: the target does not accept the client certificate CN=stranger (issued by CN=other-ca): unknown CA")
    assert reachable(alerting.url, tls=TlsOptions(str(pki.client_cert), str(pki.client_key), str(pki.ca.cert))) \
        is None


@pytest.mark.parametrize("mistake, message", [
    ("missing-key", "TLS: cannot read the client key (--tls-key) {missing}: No such file or directory"),
    ("garbage-key", "TLS: cannot use the client certificate {cert} with the key {garbage}: they are not a PEM "
                    "certificate and an unencrypted PEM key"),
    ("other-key", "TLS: cannot use the client certificate {cert} with the key {other}: the key (--tls-key) is not "
                  "the certificate's"),
    ("garbage-bundle", "TLS: the CA bundle {garbage} holds no usable PEM certificate"),
    ("key-alone", "TLS: --tls-cert and --tls-key go together"),
])
def test_an_unusable_certificate_key_or_bundle_file(pki, mtls, tmp_path, mistake, message):
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a PEM file\n")
    missing = tmp_path / "missing.key"
    options = {"missing-key": ["--tls-cert", str(pki.client_cert), "--tls-key", str(missing)],
               "garbage-key": ["--tls-cert", str(pki.client_cert), "--tls-key", str(garbage)],
               "other-key": ["--tls-cert", str(pki.client_cert), "--tls-key", str(pki.stranger_key)],
               "garbage-bundle": [*client_options(pki), "--ca-bundle", str(garbage)],
               "key-alone": ["--tls-key", str(pki.client_key)]}[mistake]
    refused(gate(mtls.url, *options),
            message.format(missing=missing, cert=pki.client_cert, garbage=garbage, other=pki.stranger_key))


def test_a_tls_failure_mid_run_ends_it_with_the_same_message(pki, mtls):
    """Without the reachability check (a target whose TLS fails only later): the signed clients' requests and
    Schemathesis' (the requests adapter) end the run with the one TLS message, in this process or a worker's."""
    no_client_cert = TlsOptions(ca_bundle=str(pki.ca.cert))
    for checks in (("security:unsigned",), ("schema:generated-requests",)):
        with pytest.raises(TlsFailure, match=r"^TLS: the target requires a client certificate"):
            run(RunOptions(mtls.url, ("security", "schema"), checks=checks, max_examples=1, tls=no_client_cert))
    with pytest.raises(TlsFailure, match=r"^TLS: the target requires a client certificate"):
        run(RunOptions(mtls.url, ("security", "stateful"), checks=("security:unsigned", "stateful:lifecycle"),
                       max_examples=1, workers=2, tls=no_client_cert))
    assert str(pickle.loads(pickle.dumps(TlsFailure(REQUIRED)))) == REQUIRED


def test_the_checks_come_before_the_target(pki):
    with pytest.raises(TlsConfigError, match="--insecure verifies nothing"):
        TlsOptions(ca_bundle=str(pki.ca.cert), insecure=True)
    assert reachable("https://127.0.0.1:9", tls=TlsOptions(ca_bundle=str(pki.ca.cert))).startswith(
        "https://127.0.0.1:9 is not reachable: ConnectError")


# ---------------------------------------------------------------- the pytest plugin
def plugin(tmp_path, url: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conformance.gate.pytest_plugin", "--ob-target", url,
                           "--ob-check", "security:unsigned,stateful:lifecycle", "--ob-max-examples", "1", *options,
                           "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_the_pytest_plugin_over_mutual_tls(pki, mtls, tmp_path):
    done = plugin(tmp_path, mtls.url, "--ob-tls-cert", str(pki.client_cert), "--ob-tls-key", str(pki.client_key),
                  "--ob-ca-bundle", str(pki.ca.cert))
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr
    done = plugin(tmp_path, mtls.url, "--ob-ca-bundle", str(pki.ca.cert))
    assert done.returncode == 2, done.stdout + done.stderr
    assert REQUIRED in done.stdout + done.stderr and "failed" not in done.stdout, done.stdout + done.stderr


# ---------------------------------------------------------------- --insecure
def test_insecure_runs_unverified_warns_and_the_report_says_so(pki, mtls, tmp_path):
    result = gate(mtls.url, *client_options(pki), "--insecure", "--report-dir", str(tmp_path), checks="security:unsigned")
    assert result.exit_code == 0, result.output[-3000:]
    assert "Warning: --insecure: the target's certificate is not verified" in result.output
    assert "TLS: the target's certificate was not verified (--insecure)" in result.output
    report = json.loads((tmp_path / "conform.json").read_text())
    assert report["run"]["tls"]["verified"] is False


def test_the_reproducer_carries_the_tls_options(pki):
    from conformance.client import PreparedRequest
    from conformance.gate.session import curl

    request = PreparedRequest("GET", "/v1/x", [("X-Request-ID", "1")], b"")
    mutual = TlsOptions(str(pki.client_cert), str(pki.client_key), str(pki.ca.cert))
    assert f"curl -sS -i --cert {pki.client_cert} --key {pki.client_key} --cacert {pki.ca.cert} -X GET" \
        in curl("https://bank.example", request, tls=mutual)
    assert "curl -sS -i --insecure -X GET" in curl("https://bank.example", request, tls=TlsOptions(insecure=True))


# ---------------------------------------------------------------- HTTPS_PROXY and NO_PROXY
class ConnectProxy(LoopbackServer):
    """An HTTP proxy answering CONNECT with a tunnel (as a corporate proxy does for https); ``tunnels`` the
    CONNECT targets it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.tunnels: list[str] = []

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        if method != "CONNECT":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        self.tunnels.append(target)
        host, port = target.rsplit(":", 1)
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.wait([asyncio.ensure_future(pipe(reader, upstream_writer)),
                            asyncio.ensure_future(pipe(upstream_reader, writer))],
                           return_when=asyncio.FIRST_COMPLETED)
        upstream_writer.close()
        writer.close()


@pytest.fixture
def proxy(monkeypatch):
    server = ConnectProxy().start()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", server.url)
    yield server
    server.stop()


def test_https_proxy_tunnels_every_connection_of_the_run(pki, mtls, proxy):
    result = gate(mtls.url, *client_options(pki), "--ca-bundle", str(pki.ca.cert))
    assert result.exit_code == 0, result.output[-3000:]
    assert proxy.tunnels and set(proxy.tunnels) == {f"127.0.0.1:{mtls.port}"}, proxy.tunnels


def test_no_proxy_keeps_loopback_direct(pki, mtls, proxy, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    result = gate(mtls.url, *client_options(pki), "--ca-bundle", str(pki.ca.cert), checks="security:unsigned")
    assert result.exit_code == 0, result.output[-3000:]
    assert proxy.tunnels == []


# A staging host behind mTLS and a gateway whose profile has the gateway's header signed: a finding from there is
# replayed there, re-signed as the profile has requests signed (a Signature leaving the header out is refused).
CLIENT_ID = "X-IBM-Client-Id: 6f1c2b0e-obvalidate"
SIGNED_GATEWAY_PROFILE = "gateway-headers: [X-IBM-Client-Id]\nsignature: {extra-headers: [X-IBM-Client-Id]}\n"


def _staging(pki, profile, *faults: str) -> ReferenceServer:
    return ReferenceServer(faults=faults, profile=profile, tls=ServerTls(str(pki.server_cert), str(pki.server_key),
                                                                        str(pki.ca.cert))).start()


def test_replay_over_mutual_tls_with_a_gateway_header(pki, tmp_path):
    from conformance.sandbox import faults as F
    from validator.context import Profile

    profile_path = tmp_path / "profile.yaml"
    profile_path.write_text(SIGNED_GATEWAY_PROFILE, encoding="utf-8")
    profile = Profile.load(str(profile_path))
    connection = [*client_options(pki), "--ca-bundle", str(pki.ca.cert), "-H", CLIENT_ID,
                  "--profile", str(profile_path), "--rate-limit", "50", "--request-timeout", "20"]
    faulty = _staging(pki, profile, F.DIGEST_NOT_CHECKED)
    try:
        result = gate(faulty.url, *connection, "--report-dir", str(tmp_path), checks="security:tampered-body")
        assert result.exit_code == 1, result.output[-3000:]
        report = json.loads((tmp_path / "conform.json").read_text(encoding="utf-8"))
        assert "6f1c2b0e" not in json.dumps(report["findings"])           # the gateway's value is not recorded
        assert any(f["replay"] == {"by": "request"} for f in report["findings"])
        again = CliRunner().invoke(conform, ["--target", faulty.url, *connection, "--format", "json",
                                             "--replay", str(tmp_path / "conform.json")])
        assert again.exit_code == 1, again.output[-3000:]
        assert {v["status"] for v in json.loads(again.output)} == {"still failing"}, again.output
    finally:
        faulty.stop()
    faithful = _staging(pki, profile)
    try:
        fixed = CliRunner().invoke(conform, ["--target", faithful.url, *connection, "--format", "json",
                                             "--replay", str(tmp_path / "conform.json")])
        assert fixed.exit_code == 0, fixed.output[-3000:]
        verdicts = json.loads(fixed.output)
        assert verdicts and {v["status"] for v in verdicts} == {"fixed"}, fixed.output
        assert {v["by"] for v in verdicts} >= {"request"}
    finally:
        faithful.stop()


def test_replay_without_the_client_certificate_says_so_once(pki, mtls, tmp_path):
    report = tmp_path / "conform.json"
    report.write_text('{"findings": []}')
    result = CliRunner().invoke(conform, ["--target", mtls.url, "--ca-bundle", str(pki.ca.cert), "--replay",
                                          str(report)])
    refused(result, REQUIRED)


# ---------------------------------------------------------------- edge-cases reaches the same host the same way
def test_edge_cases_over_mutual_tls_with_a_gateway_header(pki, mtls, tmp_path):
    from conformance.edges.cli import edge_cases

    options = ["--target", mtls.url, "--kind", "sepa-credit-transfer", "--max-examples", "1", "-H", CLIENT_ID,
               "--rate-limit", "200"]
    refused(CliRunner().invoke(edge_cases, [*options, "--ca-bundle", str(pki.ca.cert), "--out", str(tmp_path / "no")]),
            REQUIRED)
    result = CliRunner().invoke(edge_cases, [*options, *client_options(pki), "--insecure",
                                             "--out", str(tmp_path / "edges")])
    assert result.exit_code == 0, result.output[-3000:]
    report = json.loads((tmp_path / "edges" / "report.json").read_text(encoding="utf-8"))
    sent = [c for c in report["cases"] if c.get("actual")]
    assert len(sent) > 100 and all(c["agree"] for c in sent), result.output
    curls = [c["curl"] for c in sent]
    assert all('"${TARGET:?' in c and str(mtls.port) not in c for c in curls)   # the target as a variable
    assert all(f"--cert {pki.client_cert}" in c and "X-IBM-Client-Id" in c and "6f1c2b0e" not in c for c in curls)
    markdown = (tmp_path / "edges" / "report.md").read_text(encoding="utf-8")
    assert "export TARGET=" + mtls.url in markdown and "not verified (--insecure)" in markdown   # as it warned
    assert report["tls"] == {"client_certificate": str(pki.client_cert), "ca_bundle": None, "verified": False}
