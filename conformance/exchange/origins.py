"""Where the gate may send a request: the target's origin (scheme, host, port) and those given with
``--allow-origin``; nowhere else.

A target's answers carry links the gate follows (the SCA page its ``_links.scaRedirect`` names, the form action of
that page) and links it judges (every ``_links`` href). A link elsewhere -- a shared staging host, the cloud metadata
address -- would make the gate a request forgery against the CI network, so it is a finding (:data:`RULE`,
"links off the target"), never a request. :meth:`Origins.follow` is the one place a follower resolves a link and asks
whether it may go there; the run's connection pool asks :meth:`Origins.allows` too before sending anything, so no
request leaves the allowed origins even from a follower that forgot to ask (it then ends its check with
:class:`OffTarget`).

Origins compare as a client connects: scheme and host case-insensitively, a default port (80 for http, 443 for
https) equal to its absence, a host's trailing dot dropped, an IP address in any spelling its parser takes (``127.1``,
``[0:0::1]``) as that address, an international name as its IDNA form.
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Iterable

import httpx

RULE = "link-off-target"
DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]


def origin_of(url: httpx.URL | str) -> Origin | None:
    """The (scheme, host, port) a client connects to for ``url``; None for a URL no HTTP client sends (another
    scheme, no host, a port out of range)."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
        scheme, host, port = parsed.scheme.lower(), parsed.host, parsed.port
    except (httpx.InvalidURL, ValueError, TypeError, UnicodeError):
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    if port is None:
        port = DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return None
    return scheme, _host(host), port


def _host(host: str) -> str:
    host = host.lower().rstrip(".")
    try:
        return ipaddress.ip_address(host.strip("[]")).compressed
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefx." for c in host) and any(c.isdigit() for c in host):
        try:   # the shorthand IPv4 spellings the resolver takes (127.1, 0x7f.0.0.1, 2130706433)
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            pass
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def shown(origin: Origin) -> str:
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if DEFAULT_PORTS[scheme] == port else f":{port}")


def parse_allowed(text: str) -> Origin:
    """An origin as ``--allow-origin`` takes it (``scheme://host[:port]``); ValueError saying what is wrong."""
    origin = origin_of(text.strip())
    if origin is None:
        raise ValueError(f"{text!r} is not an http(s) origin (scheme://host[:port])")
    parsed = httpx.URL(text.strip())
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment or parsed.userinfo:
        raise ValueError(f"{text!r} is not an origin: give scheme://host[:port] only (a path, query or user would "
                         "limit nothing: every path of the origin is allowed)")
    return origin


class OffTarget(Exception):
    """A link of the target's leads off the allowed origins: not requested. ``where`` says where the link appeared
    (an answer's pointer, the SCA page's form)."""

    rule = RULE

    def __init__(self, url: str, where: str, allowed: tuple[Origin, ...]) -> None:
        self.url, self.where, self.allowed = url, where, allowed
        names = ", ".join(shown(o) for o in allowed)
        super().__init__(f"{where} leads to {url!r}, off the target ({names}): not requested (a link elsewhere is "
                         f"followed only to an origin given with --allow-origin)")


class Origins:
    """The origins a run may send requests to: the target's, then those allowed (``--allow-origin``)."""

    def __init__(self, target: str, allowed: Iterable[str | Origin] = ()) -> None:
        own = origin_of(target)
        if own is None:
            raise ValueError(f"the target {target!r} is not an http(s) URL")
        self.target = target
        extra = [a if isinstance(a, tuple) else parse_allowed(a) for a in allowed]
        self.origins: tuple[Origin, ...] = tuple(dict.fromkeys([own, *extra]))

    def allows(self, url: httpx.URL | str) -> bool:
        return origin_of(url) in self.origins

    def follow(self, href: str, base: httpx.URL | str, where: str) -> httpx.URL:
        """The URL a link ``href`` found at ``where`` leads to, resolved against ``base`` (the URL of the answer
        that carried it); :class:`OffTarget` when it leads off the allowed origins or is no URL at all."""
        try:
            url = (base if isinstance(base, httpx.URL) else httpx.URL(base)).join(href)
        except (httpx.InvalidURL, ValueError, TypeError, UnicodeError):
            raise OffTarget(href, where, self.origins) from None
        if not self.allows(url):
            raise OffTarget(str(url), where, self.origins)
        return url

    def check(self, url: httpx.URL | str, where: str) -> None:
        """:class:`OffTarget` unless ``url`` is on an allowed origin (the pool's guard: every request of the run)."""
        if not self.allows(url):
            raise OffTarget(str(url), where, self.origins)
