"""``obvalidate proxy --upstream URL``: the validating reverse proxy's command line (README "Watching a TPP's
traffic: obvalidate proxy")."""
from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
from pathlib import Path

import click

from conformance.bounded import DEFAULT_MAX_BYTES, DEFAULT_SECONDS, Limits

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, which on SIGINT/SIGTERM finishes the exchanges in flight and returns (uvicorn's own
        re-raises the signal once it has stopped, which would end the process before the log is flushed and the
        report written)."""

        @contextlib.contextmanager
        def capture_signals(self):
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)
    return Server


def serve(options, judging, host: str, sock: socket.socket, *, announce=None, ssl_context=None):
    """Serve ``options`` on the bound socket ``sock`` until SIGINT/SIGTERM (or ``should_exit``); returns when every
    exchange in flight has finished. ``announce(server)`` is called with the server before it starts (tests stop it
    through ``server.should_exit``). ``ssl_context``: the TLS towards an https upstream (its CAs, the TPP's client
    certificate); the default CAs without it."""
    import uvicorn

    from .forward import ProxyApp, RawHeaders

    app = ProxyApp(options, judging.submit, judging.ask if options.enforce else None, ssl_context=ssl_context)
    config = uvicorn.Config(app, host=host, http=RawHeaders, ws="none", lifespan="on", log_level="warning",
                            access_log=False, server_header=False, date_header=False, proxy_headers=False,
                            timeout_keep_alive=30, timeout_graceful_shutdown=int(options.limits.seconds) + 5,
                            limit_concurrency=options.max_connections)
    server = _server_class()(config)
    if announce is not None:
        announce(server)
    server.run(sockets=[sock])
    return server


@click.command(name="proxy")
@click.option("--upstream", required=True, metavar="URL",
              help="The bank's (or sandbox's) base URL every request is forwarded to, e.g. https://sandbox.bank.example "
                   "(a path is put in front of each request's).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: a free one, printed).")
@click.option("--profile", "profile_path", type=click.Path(exists=True, dir_okay=False),
              help="Implementer profile (YAML): the bank's choices the judge holds it to.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, writable=True),
              help="JSON lines: each exchange, then each of its findings (party, rule, requestId, method, path, "
                   "status, curl).")
@click.option("--record", "record_path", type=click.Path(dir_okay=False, writable=True),
              help="Record the session as a HAR 1.2 file (obvalidate traffic judges it again later).")
@click.option("--enforce", is_flag=True,
              help="Answer a request with client errors as a conforming bank does (the predicted status, code and "
                   "error body) instead of forwarding it.")
@click.option("--report-dir", type=click.Path(file_okay=False),
              help="Write proxy.json, proxy.junit.xml and proxy.html here when the proxy stops.")
@click.option("--preserve-host", is_flag=True,
              help="Forward the client's Host header as sent (by default it names the upstream).")
@click.option("--request-timeout", default=DEFAULT_SECONDS, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="Seconds the upstream has for an answer, body included: then 504 (or the answer cut).")
@click.option("--max-response-bytes", default=DEFAULT_MAX_BYTES, show_default=True, type=click.IntRange(1),
              help="Bytes of each body the judge reads (the answer is forwarded whole; over this it is an "
                   "answer-too-large finding).")
@click.option("--quiet", is_flag=True, help="No line per exchange on the terminal.")
@click.option("--tls-cert", type=click.Path(dir_okay=False),
              help="TLS client certificate (PEM; the TPP's QWAC) for the connections to an https upstream.")
@click.option("--tls-key", type=click.Path(dir_okay=False), help="Its private key (PEM, unencrypted).")
@click.option("--ca-bundle", type=click.Path(dir_okay=False),
              help="Trust these CAs (PEM) for the upstream's certificate instead of the default ones.")
@click.option("--insecure", is_flag=True,
              help="Do not verify the upstream's certificate (a throwaway environment only).")
def proxy(upstream, host, port, profile_path, log_path, record_path, enforce, report_dir, preserve_host,
          request_timeout, max_response_bytes, quiet, tls_cert, tls_key, ca_bundle, insecure):
    """A validating reverse proxy between a TPP and a bank: forwards every request and answer byte for byte and
    judges each exchange as it happens (client findings: the TPP's request; server findings: the bank's answer).
    Ctrl-C (SIGINT) or SIGTERM finishes the exchanges in flight, flushes the log and writes the report. Exit 0 when
    no exchange had a finding, 1 when one had, 2 on a usage error."""
    from validator.context import DEFAULT_PROFILE, ConfigError, Profile
    from validator.formats.escape import printable

    from . import report
    from .forward import ProxyOptions, Upstream
    from .judging import Judging, Outputs

    def fail(message: str):
        click.echo(f"obvalidate proxy: {printable(message)}", err=True)
        sys.exit(EXIT_USAGE)

    try:
        where = Upstream(upstream)
    except ValueError as exc:
        fail(str(exc))
    ssl_context = None
    if tls_cert or tls_key or ca_bundle or insecure:
        from conformance.gate.tls import TlsConfigError, TlsOptions

        if where.scheme != "https":
            fail("--tls-cert, --tls-key, --ca-bundle and --insecure are for an https:// upstream")
        try:
            ssl_context = TlsOptions(tls_cert, tls_key, ca_bundle, insecure).context()
        except TlsConfigError as exc:
            fail(str(exc))
    profile = DEFAULT_PROFILE
    if profile_path:
        try:
            profile = Profile.load(profile_path)
        except ConfigError as exc:
            fail(str(exc))
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    bound = sock.getsockname()[1]
    for path in (log_path, record_path):   # the worker writes them: refused here, with the reason, when it cannot
        if path:
            try:
                open(path, "w", encoding="utf-8").close()
            except OSError as exc:
                sock.close()
                fail(f"cannot write {exc.filename}: {exc.strerror}")
    options = ProxyOptions(upstream, Limits(max_response_bytes, request_timeout), enforce=enforce,
                           preserve_host=preserve_host, profile=profile)
    judging = Judging(Outputs(None if quiet else "-", log_path, record_path), profile=profile,
                      base_path=where.base_path, origins=(where.origin,), asks=enforce)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"obvalidate proxy: http://{shown}:{bound} -> {where.origin}{where.base_path}"
               f"{' (--enforce)' if enforce else ''}; Ctrl-C to stop", err=True)
    try:
        serve(options, judging, host, sock, ssl_context=ssl_context)
    finally:
        tally = judging.close()
    written = report.write(tally, report_dir, upstream, enforce=enforce) if report_dir else []
    s = report.summary(tally)
    click.echo(f"obvalidate proxy: {s['exchanges']} exchanges, {s['with_findings']} with findings "
               f"({s['client_findings']} client, {s['server_findings']} server; {s['distinct_findings']} distinct; "
               f"{s['warnings']} warnings), "
               f"{s['skipped']} skipped, {s['answered_by_proxy']} answered by the proxy"
               + (f"; report: {', '.join(str(Path(p)) for p in written)}" if written else ""), err=True)
    for error in s["errors"]:
        click.echo(f"obvalidate proxy: {error}", err=True)
    sys.exit(EXIT_FINDINGS if report.verdict_failed(tally) else EXIT_CLEAN)
