"""How the sandbox is served as a bank serves its API: over HTTPS, optionally requiring a TLS client certificate
from a given CA (the TPP's QWAC, as a PSD2 host requires one), and behind a TLS-terminating proxy whose forwarded
scheme and host its absolute links (the scaRedirect href) use.

uvicorn serves the TLS (:meth:`ServerTls.uvicorn_options`); :class:`ForwardedHeaders` rewrites a request's scheme and
Host from the proxy's headers, for connections from the proxies named only (as uvicorn's ``forwarded_allow_ips``,
whose own middleware reads neither ``X-Forwarded-Host`` nor ``Forwarded``).
"""
from __future__ import annotations

import ipaddress
import re
import ssl
from dataclasses import dataclass
from typing import Any

HOST = re.compile(r"^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$")
SCHEMES = ("http", "https")


@dataclass(frozen=True)
class ServerTls:
    cert: str                    # the server's certificate (PEM, its chain after it)
    key: str                     # its private key (PEM, unencrypted)
    client_ca: str | None = None  # when given: a client certificate issued by these CAs is required

    def check(self) -> None:
        """ValueError naming the file when the certificate, key or CA file cannot be used (before serving)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"cannot use the certificate {self.cert} with the key {self.key}: "
                             f"{getattr(exc, 'strerror', None) or getattr(exc, 'reason', None) or exc}") from None
        if self.client_ca:
            try:
                context.load_verify_locations(self.client_ca)
            except (OSError, ssl.SSLError) as exc:
                raise ValueError(f"cannot use the client CA file {self.client_ca}: "
                                 f"{getattr(exc, 'strerror', None) or getattr(exc, 'reason', None) or exc}") from None

    def uvicorn_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"ssl_certfile": self.cert, "ssl_keyfile": self.key}
        if self.client_ca:
            options.update(ssl_ca_certs=self.client_ca, ssl_cert_reqs=ssl.CERT_REQUIRED)
        return options


class ForwardedHeaders:
    """ASGI middleware: a request arriving from one of ``trusted`` (comma-separated addresses or networks, ``*`` for
    any) gets the scheme and host its proxy forwarded: ``Forwarded`` (RFC 7239: ``proto=``, ``host=``) or else
    ``X-Forwarded-Proto`` and ``X-Forwarded-Host``. Of a list the last value counts (the one the trusted proxy
    added); a value that is no scheme or host is ignored. A request from anywhere else is left as it came."""

    def __init__(self, app, trusted: str) -> None:
        self.app = app
        names = [n.strip() for n in trusted.split(",") if n.strip()]
        self.anyone = "*" in names
        try:
            self.networks = [ipaddress.ip_network(n, strict=False) for n in names if n != "*"]
        except ValueError as exc:
            raise ValueError(f"--forwarded-allow-ips: {exc}") from None

    def trusts(self, client) -> bool:
        if self.anyone:
            return True
        try:
            address = ipaddress.ip_address(client[0]) if client else None
        except ValueError:
            return False
        return address is not None and any(address in network for network in self.networks)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.trusts(scope.get("client")):
            scope = forwarded(scope)
        await self.app(scope, receive, send)


def forwarded(scope: dict) -> dict:
    """``scope`` with the forwarded scheme and host (see :class:`ForwardedHeaders`)."""
    headers = [(name.lower(), value.decode("latin-1")) for name, value in scope["headers"]]
    proto = host = None
    elements = [e for name, value in headers if name == b"forwarded" for e in value.split(",") if e.strip()]
    if elements:
        pairs = dict(_pair(p) for p in elements[-1].split(";") if "=" in p)
        proto, host = pairs.get("proto"), pairs.get("host")
    else:
        proto = _last(headers, b"x-forwarded-proto")
        host = _last(headers, b"x-forwarded-host")
    scope = dict(scope)
    if proto and proto.lower() in SCHEMES:
        scope["scheme"] = proto.lower()
    if host and HOST.match(host):
        scope["headers"] = [(n, v) for n, v in scope["headers"] if n.lower() != b"host"] + \
                           [(b"host", host.encode("latin-1"))]
    return scope


def _pair(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    return name.strip().lower(), value.strip().strip('"')


def _last(headers, name: bytes) -> str | None:
    values = [v.strip() for n, value in headers if n == name for v in value.split(",") if v.strip()]
    return values[-1] if values else None
