"""`obvalidate sandbox serve` as a bank serves its API: HTTPS with `--tls-cert/--tls-key`, a required client
certificate with `--client-ca`, and behind a TLS-terminating proxy the scheme and host of its absolute links (the
scaRedirect href) taken from the proxy's headers, only from the addresses `--forwarded-allow-ips` names."""
from __future__ import annotations

import ssl

import httpx
import pytest
from click.testing import CliRunner

from conformance.client import Identity, SignedClient
from conformance.gate.target import ReferenceServer, reachable
from conformance.gate.tls import TlsOptions
from conformance.sandbox.cli import serve as serve_command
from conformance.sandbox.serving import ForwardedHeaders, ServerTls
from sandbox.flows import sepa, start
from tls_material import material


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return material(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tpp() -> Identity:
    return Identity.generate("PSDNO-FSA-HTTPS")


def sca_href(base_url: str, identity: Identity, http: httpx.Client) -> str:
    with SignedClient(base_url, identity, http=http) as client:
        return start(client, sepa(client))["_links"]["scaRedirect"]["href"]


# ---------------------------------------------------------------- HTTPS, the client certificate required
def test_serve_https_requiring_a_client_certificate(serve, pki, tpp):
    server = serve(tls=ServerTls(str(pki.server_cert), str(pki.server_key), str(pki.ca.cert)))
    assert server.url.startswith("https://127.0.0.1:")
    mutual = TlsOptions(str(pki.client_cert), str(pki.client_key), str(pki.ca.cert))
    assert reachable(server.url, tls=mutual) is None
    assert reachable(server.url, tls=TlsOptions(ca_bundle=str(pki.ca.cert))) == \
        "TLS: the target requires a client certificate (--tls-cert/--tls-key)"
    context = mutual.context()
    with httpx.Client(verify=context) as http:
        assert sca_href(server.url, tpp, http).startswith(f"{server.url}/sca/")


def test_serve_https_without_a_client_ca_asks_for_no_certificate(serve, pki):
    server = serve(tls=ServerTls(str(pki.server_cert), str(pki.server_key)))
    assert reachable(server.url, tls=TlsOptions(ca_bundle=str(pki.ca.cert))) is None


@pytest.mark.parametrize("options, message", [
    (["--tls-cert", "{cert}"], "--tls-cert and --tls-key go together"),
    (["--client-ca", "{ca}"], "--client-ca needs --tls-cert and --tls-key"),
    (["--tls-cert", "{cert}", "--tls-key", "{missing}"], "TLS: cannot use the certificate {cert} with the key "
                                                         "{missing}: No such file or directory"),
    (["--tls-cert", "{cert}", "--tls-key", "{key}", "--client-ca", "{garbage}"],
     "TLS: cannot use the client CA file {garbage}"),
    (["--forwarded-allow-ips", "10.0.0.0/8,proxy.example"], "--forwarded-allow-ips: "),
])
def test_serve_refuses_unusable_tls_options(pki, tmp_path, options, message):
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("no PEM\n")
    names = {"cert": pki.server_cert, "key": pki.server_key, "ca": pki.ca.cert, "missing": tmp_path / "missing.key",
             "garbage": garbage}
    result = CliRunner().invoke(serve_command, ["--db", ":memory:", *(o.format(**names) for o in options)])
    assert result.exit_code == 2, result.output
    assert message.format(**names) in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- behind a TLS-terminating proxy
FORWARDED = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "psd2.bank.example"}


@pytest.mark.parametrize("trusted, headers, link", [
    ("127.0.0.0/8", FORWARDED, "https://psd2.bank.example/sca/"),
    ("*", {"Forwarded": 'for=192.0.2.60;proto=https;host="psd2.bank.example:8443"'}, "https://psd2.bank.example:8443/sca/"),
    # a list: the value the trusted proxy added (the last) counts
    ("::1,127.0.0.1", {"X-Forwarded-Proto": "http, https", "X-Forwarded-Host": "evil.example, psd2.bank.example"},
     "https://psd2.bank.example/sca/"),
    ("10.0.0.1", FORWARDED, None),                                            # not from the proxy: ignored
    (None, FORWARDED, None),                                                  # not enabled: ignored
    ("*", {"X-Forwarded-Proto": "javascript", "X-Forwarded-Host": "evil.example/x"}, None),  # no scheme, no host
])
def test_absolute_links_follow_the_trusted_proxy_only(tpp, trusted, headers, link):
    server = ReferenceServer(forwarded_allow_ips=trusted).start()
    try:
        with httpx.Client(headers=headers) as http:
            assert sca_href(server.url, tpp, http).startswith(link or f"{server.url}/sca/")
    finally:
        server.stop()


def test_trusted_proxies_by_address_and_network():
    proxies = ForwardedHeaders(None, "10.0.0.0/8, 192.0.2.1, fd00::/8")
    assert proxies.trusts(("10.200.0.1", 1)) and proxies.trusts(("192.0.2.1", 1)) and proxies.trusts(("fd00::5", 1))
    assert not proxies.trusts(("192.0.2.2", 1)) and not proxies.trusts(None) and not proxies.trusts(("sock", 0))
    assert ForwardedHeaders(None, "*").trusts(None)


def test_serve_behind_a_tls_terminating_proxy(serve, tpp):
    """The command line's --forwarded-allow-ips: the sandbox on plain HTTP behind the proxy, its links https."""
    honoured = serve("proxied", forwarded_allow_ips="127.0.0.1")
    with httpx.Client(headers=FORWARDED) as http:
        assert sca_href(honoured.url, tpp, http).startswith("https://psd2.bank.example/sca/")
    plain = serve("plain")
    with httpx.Client(headers=FORWARDED) as http:
        assert sca_href(plain.url, tpp, http).startswith(f"{plain.url}/sca/")


def test_server_tls_options_for_uvicorn(pki):
    assert ServerTls("c", "k").uvicorn_options() == {"ssl_certfile": "c", "ssl_keyfile": "k"}
    assert ServerTls("c", "k", "ca").uvicorn_options()["ssl_cert_reqs"] == ssl.CERT_REQUIRED
