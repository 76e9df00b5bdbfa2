"""`obvalidate sandbox`: run the reference sandbox and list its fault switches.

Registered as a subcommand through the ``obvalidate.commands`` entry-point group (pyproject.toml), so the validator's
command line never imports conformance/ itself.
"""
from __future__ import annotations

import errno
import os
import socket
import sys
from typing import NoReturn

import click

from .serving import ConnectionLimits

DEFAULT_DB = "obvalidate-sandbox.db"


@click.group("sandbox")
def sandbox() -> None:
    """The reference sandbox: a faithful implementation of the interface, with fault switches."""


@sandbox.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--db", "db", default=DEFAULT_DB, show_default=True,
              help="SQLite database file (created with the fixed test data when new); ':memory:' keeps nothing.")
@click.option("--profile", "profile_file", type=click.Path(exists=True, dir_okay=False),
              help="Implementer profile (YAML) the request check uses.")
@click.option("--fault", "faults", multiple=True, metavar="NAME",
              help="Turn a fault switch on (repeatable); see `obvalidate sandbox faults`.")
@click.option("--now", "now", metavar="ISO-INSTANT",
              help="Start the sandbox clock at this instant (e.g. 2026-07-01T08:30:00Z); it runs on from there.")
@click.option("--test-data", "test_data_file", type=click.Path(exists=True, dir_okay=False),
              help="JSON test data set (customers, accounts, cardAccounts, cardTransactions, accountTransactions) a new "
                   "database and initializeSandbox start with, instead of the fixed set of A32.")
@click.option("--tls-cert", type=click.Path(dir_okay=False),
              help="Serve HTTPS with this server certificate (PEM, its chain after it); with --tls-key.")
@click.option("--tls-key", type=click.Path(dir_okay=False), help="The server certificate's private key (PEM).")
@click.option("--client-ca", type=click.Path(dir_okay=False),
              help="Require a TLS client certificate issued by these CAs (PEM), as a PSD2 host requires the TPP's.")
@click.option("--forwarded-allow-ips", metavar="IPS",
              help="Behind a TLS-terminating proxy: take the scheme and host of the absolute links (scaRedirect) "
                   "from Forwarded or X-Forwarded-Proto/-Host on connections from these addresses or networks "
                   "(comma-separated; '*' any). Without it those headers are ignored.")
@click.option("--trusted-ca", "trusted_ca", type=click.Path(dir_okay=False), metavar="PEM",
              help="Accept only TPP-Signature-Certificates issued by these CAs (else 401 CERTIFICATE_INVALID), as a "
                   "bank trusts only its QTSPs; a TPP is then its organizationIdentifier alone (A39). Without it any "
                   "certificate is accepted and a TPP is its identifier together with its key.")
@click.option("--access-log/--no-access-log", "access_log", default=None,
              help="Print one line per request (method, path, status, message code, X-Request-ID, milliseconds) "
                   "on stderr. Default: on when stderr is a terminal.")
@click.option("--header-timeout", type=click.FloatRange(min=0.01), default=ConnectionLimits.header_timeout,
              show_default=True, metavar="SECONDS",
              help="Close a connection whose request line and headers have not arrived within this time (408 when "
                   "a request had begun).")
@click.option("--body-timeout", type=click.FloatRange(min=0.01), default=ConnectionLimits.body_timeout,
              show_default=True, metavar="SECONDS",
              help="Answer 408 and close when a request's body has not arrived within this time of its headers.")
@click.option("--max-connections", type=click.IntRange(min=1), default=ConnectionLimits.max_connections,
              show_default=True, help="Open connections beyond which a request is answered 503.")
def serve(host: str, port: int, db: str, profile_file: str | None, faults: tuple[str, ...], now: str | None,
          test_data_file: str | None, tls_cert: str | None, tls_key: str | None, client_ca: str | None,
          forwarded_allow_ips: str | None, trusted_ca: str | None, access_log: bool | None, header_timeout: float,
          body_timeout: float, max_connections: int) -> None:
    """Serve the sandbox over HTTP or HTTPS (Starlette on uvicorn). The SCA page is at /sca/<token>.

    Everything is checked before anything is created: a port in use (or any address that cannot be listened on)
    ends the command with exit 2 and one line, and no database file is made."""
    import uvicorn

    from validator.context import ConfigError, Profile

    from .app import create_app, load_trusted_cas
    from .clock import Clock, parse_instant
    from .faults import ActiveFaults, UnknownFault
    from .serving import AccessLog, Disconnected, ForwardedHeaders
    from .testdata import DataSetError, load

    try:
        profile = Profile.load(profile_file) if profile_file else None
        data = load(test_data_file) if test_data_file else None
        clock = Clock(parse_instant(now) if now else None)
        active = ActiveFaults.of(faults)
    except (ConfigError, UnknownFault, DataSetError) as exc:
        raise click.UsageError(str(exc)) from None
    except ValueError as exc:
        raise click.BadParameter(f"not an ISO 8601 instant: {exc}", param_hint="--now") from None
    try:
        trusted = load_trusted_cas(trusted_ca) if trusted_ca else ()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    tls = _server_tls(tls_cert, tls_key, client_ca)
    forwarded = None
    if forwarded_allow_ips:
        try:
            forwarded = ForwardedHeaders(None, forwarded_allow_ips)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    listening = _listen(host, port)
    app = _create(db, lambda: create_app(db=db, profile=profile, faults=active, clock=clock, test_data=data,
                                         trusted_cas=trusted), listening)
    if forwarded:
        forwarded.app, app = app, forwarded
    app = Disconnected(app)
    if access_log if access_log is not None else sys.stderr.isatty():
        app = AccessLog(app)
    limits = ConnectionLimits(header_timeout, body_timeout, max_connections)
    bound_port = listening.getsockname()[1]
    switched = f" with fault switches {', '.join(faults)}" if faults else ""
    required = " (a client certificate from the --client-ca required)" if client_ca else ""
    click.echo(f"obvalidate sandbox on http{'s' if tls else ''}://{_url_host(host)}:{bound_port}{required} "
               f"(database {db}){switched}", err=True)
    # uvicorn's own proxy headers off: the scheme is the proxy's only with --forwarded-allow-ips
    config = uvicorn.Config(app, log_level="warning", proxy_headers=False, access_log=False,
                            **limits.uvicorn_options(), **(tls.uvicorn_options() if tls else {}))
    uvicorn.Server(config).run(sockets=[listening])


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on (host, port), or exit 2 with one line saying why (before anything is created)."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                                 flags=socket.AI_PASSIVE)[0]
        listening = socket.socket(family, kind, proto)
    except OSError as exc:
        _stop(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait for TIME_WAIT
        listening.bind(address)
        listening.listen(2048)
    except OSError as exc:
        listening.close()
        why = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        _stop(f"cannot listen on {host}:{port}: {why}")
    listening.set_inheritable(True)
    return listening


def _create(db: str, make, listening: socket.socket):
    """``make()`` (the application, which creates the database); when it fails, a database file it began is
    removed with its -wal and -shm files, so a failed start leaves nothing behind."""
    from .storage import MEMORY

    files = [] if db == MEMORY else [db, db + "-wal", db + "-shm"]
    new = [f for f in files if not os.path.exists(f)]
    try:
        return make()
    except BaseException as exc:
        listening.close()
        for name in new:
            if os.path.exists(name):
                os.remove(name)
        if isinstance(exc, Exception):
            _stop(f"cannot start the sandbox: {exc}")
        raise


def _stop(line: str) -> NoReturn:
    click.echo(f"obvalidate sandbox: {line}", err=True)
    sys.exit(2)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _server_tls(cert: str | None, key: str | None, client_ca: str | None):
    from .serving import ServerTls

    if not cert and not key:
        if client_ca:
            raise click.UsageError("--client-ca needs --tls-cert and --tls-key (HTTPS)")
        return None
    if not (cert and key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    tls = ServerTls(cert, key, client_ca)
    try:
        tls.check()
    except ValueError as exc:
        raise click.UsageError(f"TLS: {exc}") from None
    return tls


@sandbox.command("faults")
def list_faults() -> None:
    """List the fault switches and what each breaks."""
    from .faults import FAULTS, PARAMETRISED

    width = max(len(name) for name in FAULTS)
    for fault in [*FAULTS.values(), *PARAMETRISED.values()]:
        click.echo(f"{fault.name:<{width}}  {fault.bug}")
        click.echo(f"{'':<{width}}  breaks: {fault.breaks}")
