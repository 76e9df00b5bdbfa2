"""`obvalidate sandbox`: run the reference sandbox and list its fault switches.

Registered as a subcommand through the ``obvalidate.commands`` entry-point group (pyproject.toml), so the validator's
command line never imports conformance/ itself.
"""
from __future__ import annotations

import click

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
def serve(host: str, port: int, db: str, profile_file: str | None, faults: tuple[str, ...], now: str | None,
          test_data_file: str | None, tls_cert: str | None, tls_key: str | None, client_ca: str | None,
          forwarded_allow_ips: str | None) -> None:
    """Serve the sandbox over HTTP or HTTPS (Starlette on uvicorn). The SCA page is at /sca/<token>."""
    import uvicorn

    from validator.context import ConfigError, Profile

    from .app import create_app
    from .clock import Clock, parse_instant
    from .faults import UnknownFault
    from .serving import ForwardedHeaders
    from .testdata import DataSetError, load

    try:
        profile = Profile.load(profile_file) if profile_file else None
        data = load(test_data_file) if test_data_file else None
        clock = Clock(parse_instant(now) if now else None)
        app = create_app(db=db, profile=profile, faults=faults, clock=clock, test_data=data)
    except (ConfigError, UnknownFault, DataSetError) as exc:
        raise click.UsageError(str(exc)) from None
    except ValueError as exc:
        raise click.BadParameter(f"not an ISO 8601 instant: {exc}", param_hint="--now") from None
    tls = _server_tls(tls_cert, tls_key, client_ca)
    if forwarded_allow_ips:
        try:
            app = ForwardedHeaders(app, forwarded_allow_ips)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    switched = f" with fault switches {', '.join(faults)}" if faults else ""
    required = " (a client certificate from the --client-ca required)" if client_ca else ""
    click.echo(f"obvalidate sandbox on http{'s' if tls else ''}://{host}:{port}{required} (database {db}){switched}",
               err=True)
    # uvicorn's own proxy headers off: the scheme is the proxy's only with --forwarded-allow-ips
    uvicorn.run(app, host=host, port=port, log_level="warning", proxy_headers=False,
                **(tls.uvicorn_options() if tls else {}))


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
    from .faults import FAULTS

    width = max(len(name) for name in FAULTS)
    for fault in FAULTS.values():
        click.echo(f"{fault.name:<{width}}  {fault.bug}")
        click.echo(f"{'':<{width}}  breaks: {fault.breaks}")
