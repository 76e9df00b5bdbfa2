"""TLS to the target: the client certificate (the TPP's QWAC, not the signing certificate), the CAs trusted for the
target's certificate, and what a failed handshake means, said in one sentence.

A PSD2 host asks for a TLS client certificate, often from a private CA in test environments. A run whose TLS is
wrong fails on every request; the gate says why once (exit 2) instead of reporting each request. :class:`TlsOptions`
holds the files (paths only: it travels to the worker processes, each building its own context); :func:`explain`
turns an exception of a failed request into the sentence, looking at the target's handshake again where the
exception alone does not tell (a server that asked for a certificate and closed the connection without an alert).
"""
from __future__ import annotations

import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

# OpenSSL's verification results (X509_V_ERR_*) that mean "the issuer is not one we trust".
_UNKNOWN_ISSUER = {2, 19, 20, 21}
_SELF_SIGNED = 18
_EXPIRED, _NOT_YET_VALID = 10, 9
_NAME_MISMATCH = {62, 64}          # host name, IP address
# TLS alerts a server sends about the client's certificate (OpenSSL's reason names), as this module says them.
_CERTIFICATE_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "no certificate",
    "SSLV3_ALERT_BAD_CERTIFICATE": "bad certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "unknown CA",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "certificate expired",
    "SSLV3_ALERT_CERTIFICATE_REVOKED": "certificate revoked",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE": "unsupported certificate",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "certificate unknown",
    "TLSV1_ALERT_ACCESS_DENIED": "access denied",
    "SSLV3_ALERT_HANDSHAKE_FAILURE": "handshake failure",
}
_NOT_TLS = {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "HTTP_REQUEST"}
_HANDSHAKE = 22                      # TLS content type
_CERTIFICATE_REQUEST = 13            # TLS handshake message type
PROBE_TIMEOUT = 10.0
CLIENT_CERT_HINT = "(--tls-cert/--tls-key)"
TRUST_HINT = "(--ca-bundle FILE, or --insecure)"


class TlsConfigError(ValueError):
    """A certificate, key or CA bundle that cannot be used: the run cannot start."""


@dataclass(frozen=True)
class TlsOptions:
    cert: str | None = None        # the TLS client certificate (PEM; may hold its chain)
    key: str | None = None         # its private key (PEM, unencrypted)
    ca_bundle: str | None = None   # CAs trusted for the target's certificate instead of the default ones
    insecure: bool = False         # no verification of the target's certificate (a throwaway environment)

    def __post_init__(self) -> None:
        if bool(self.cert) != bool(self.key):
            raise TlsConfigError("TLS: --tls-cert and --tls-key go together")
        if self.insecure and self.ca_bundle:
            raise TlsConfigError("TLS: --insecure verifies nothing, so --ca-bundle has no use with it")

    def context(self) -> ssl.SSLContext:
        """The client's SSL context; :class:`TlsConfigError` naming the file that cannot be used."""
        if self.insecure:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif self.ca_bundle:
            _readable(self.ca_bundle, "the CA bundle (--ca-bundle)")
            try:
                context = ssl.create_default_context(cafile=self.ca_bundle)
            except (ssl.SSLError, ValueError) as exc:
                raise TlsConfigError(f"TLS: the CA bundle {self.ca_bundle} holds no usable PEM certificate: "
                                     f"{_reason(exc)}") from None
        else:
            # httpx's default: certifi's CAs, or SSL_CERT_FILE / SSL_CERT_DIR when set
            context = httpx.create_ssl_context(verify=True, trust_env=True)
        if self.cert:
            _readable(self.cert, "the client certificate (--tls-cert)")
            _readable(self.key, "the client key (--tls-key)")
            try:
                context.load_cert_chain(self.cert, self.key)
            except ssl.SSLError as exc:
                why = ("the key (--tls-key) is not the certificate's" if "KEY_VALUES_MISMATCH" in str(exc) else
                       f"they are not a PEM certificate and an unencrypted PEM key: {_reason(exc)}")
                raise TlsConfigError(f"TLS: cannot use the client certificate {self.cert} with the key {self.key}: "
                                     f"{why}") from None
        return context

    @property
    def client_certificate(self) -> str | None:
        """The client certificate's subject and issuer, for messages; None without one."""
        if not self.cert:
            return None
        try:
            from cryptography import x509

            with open(self.cert, "rb") as f:
                certificate = x509.load_pem_x509_certificate(f.read())
            return f"{certificate.subject.rfc4514_string()} (issued by {certificate.issuer.rfc4514_string()})"
        except (OSError, ValueError):
            return self.cert

    def curl_options(self) -> list[str]:
        """curl's options for the same TLS (a finding's reproducer)."""
        options = ["--cert", self.cert, "--key", self.key] if self.cert else []
        if self.insecure:
            options.append("--insecure")
        elif self.ca_bundle:
            options += ["--cacert", self.ca_bundle]
        return options

    def as_dict(self) -> dict:
        """What the report records: the files given and whether the target's certificate was verified."""
        return {"client_certificate": self.cert, "ca_bundle": self.ca_bundle, "verified": not self.insecure}


def _readable(path: str, what: str) -> None:
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as exc:
        raise TlsConfigError(f"TLS: cannot read {what} {path}: {exc.strerror or exc}") from None


def _reason(exc: BaseException) -> str:
    return getattr(exc, "reason", None) or str(exc)


# ---------------------------------------------------------------- what a failure means
def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def explain(exc: BaseException, url: str, options: TlsOptions | None, *, probe: bool = True) -> str | None:
    """The one sentence for a request to ``url`` that failed with ``exc`` when TLS is why; None when it is not (or
    cannot be told). ``probe`` lets it look at the target's handshake again (a connection of its own) for what the
    exception does not say: the names of a certificate, whether the target asked for a client certificate."""
    options = options or TlsOptions()
    parts = urlsplit(url)
    host = parts.hostname or ""
    for error in _chain(exc):
        if isinstance(error, ssl.SSLCertVerificationError):
            return _untrusted(error, parts, options, probe)
        if isinstance(error, ssl.SSLError):
            reason = error.reason or ""
            if reason in _CERTIFICATE_ALERTS:
                return _refused(_CERTIFICATE_ALERTS[reason], options)
            if reason in _NOT_TLS:
                return f"TLS: {host}:{parts.port or 443} does not speak TLS (is it http://, not https://?)"
            return f"TLS: the handshake with {host} failed: {reason or error}"
    if parts.scheme == "https" and probe and _closed_unanswered(exc):
        seen = _handshake(parts, options, ask=True)
        if seen.asked_for_certificate and seen.answered is False:
            return _refused("it closed the connection without an answer", options)
    return None


def _closed_unanswered(exc: BaseException) -> bool:
    return any(isinstance(e, (httpx.RemoteProtocolError, httpx.ReadError, ssl.SSLEOFError, ConnectionResetError))
               for e in _chain(exc))


def _refused(why: str, options: TlsOptions) -> str:
    if not options.cert:
        return f"TLS: the target requires a client certificate {CLIENT_CERT_HINT}"
    return f"TLS: the target does not accept the client certificate {options.client_certificate}: {why}"


def _untrusted(error: ssl.SSLCertVerificationError, parts, options: TlsOptions, probe: bool) -> str:
    code = error.verify_code
    host = parts.hostname or ""
    certificate = _server_certificate(parts, options) if probe else None
    if code in _NAME_MISMATCH:
        names = ", ".join(_names(certificate)) if certificate is not None else "other names"
        return f"TLS: the certificate is for {names}, not {host} (connect by one of its names, or --insecure)"
    issuer = f" (issued by {certificate.issuer.rfc4514_string()})" if certificate is not None else ""
    if code in _UNKNOWN_ISSUER:
        why = f"unknown CA{issuer}"
    elif code == _SELF_SIGNED:
        why = "self-signed"
    elif code == _EXPIRED:
        until = f" on {certificate.not_valid_after_utc:%Y-%m-%d}" if certificate is not None else ""
        why = f"expired{until}"
    elif code == _NOT_YET_VALID:
        why = "not valid yet"
    else:
        why = error.verify_message or str(error)
    return f"TLS: the target's certificate is not trusted: {why} {TRUST_HINT}"


def _names(certificate) -> list[str]:
    from cryptography import x509

    try:
        san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = [str(n) for n in san.get_values_for_type(x509.DNSName)]
        names += [str(a) for a in san.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        names = [a.value for a in certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)]
    return names or ["no name"]


@dataclass
class _Seen:
    certificate: object = None                 # the target's certificate (cryptography), None when none was had
    asked_for_certificate: bool = False        # its handshake had a CertificateRequest
    answered: bool | None = None               # with ``ask``: whether a request got any answer on the connection


def _handshake(parts, options: TlsOptions, *, ask: bool = False) -> _Seen:
    """A handshake of our own with the target that verifies nothing (directly, not through a proxy): its
    certificate, whether it asked for a client certificate (given ours, if any) and, with ``ask``, whether a request
    sent then gets any answer at all (a target refusing the client certificate closes the connection instead)."""
    from cryptography import x509

    seen = _Seen()
    messages: list = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if options.cert:
        try:
            context.load_cert_chain(options.cert, options.key)
        except (OSError, ssl.SSLError):
            pass
    if hasattr(context, "_msg_callback"):  # CPython's handshake trace (no public API tells a CertificateRequest)
        context._msg_callback = lambda _conn, direction, _v, content, message, _data: \
            messages.append((int(content), int(message))) if direction == "read" else None
    host = parts.hostname or ""
    der = None
    try:
        with socket.create_connection((host, parts.port or 443), timeout=PROBE_TIMEOUT) as raw:
            server_name = None if _is_address(host) else host
            with context.wrap_socket(raw, server_hostname=server_name) as tls:
                der = tls.getpeercert(binary_form=True)
                if ask:
                    seen.answered = False
                    tls.sendall(f"HEAD / HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode())
                    seen.answered = bool(tls.recv(1))
    except (OSError, ValueError):
        pass
    seen.asked_for_certificate = (_HANDSHAKE, _CERTIFICATE_REQUEST) in messages
    try:
        seen.certificate = x509.load_der_x509_certificate(der) if der else None
    except ValueError:
        pass
    return seen


def _server_certificate(parts, options: TlsOptions):
    return _handshake(parts, options).certificate


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


# A TLS-terminating gateway (nginx) refusing a client certificate answers HTTP 400 with its own page.
_GATEWAY_PAGES = {"No required SSL certificate was sent": None,
                  "The SSL certificate error": "the gateway's page says 'The SSL certificate error'"}


def explain_answer(status: int, text: str, options: TlsOptions | None) -> str | None:
    """The one sentence for an HTTP answer that is a gateway's TLS refusal (nginx's 400 pages); None otherwise."""
    if status != 400:
        return None
    for words, why in _GATEWAY_PAGES.items():
        if words in text:
            return _refused(why or "no certificate", options or TlsOptions())
    return None
