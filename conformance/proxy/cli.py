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

from .limits import (BACKLOG, HEADER_TIMEOUT, IDLE_TIMEOUT, JUDGE_SECONDS, MAX_CONNECTIONS, MAX_HEADER_BYTES,
                     STOP_SECONDS)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, which on SIGINT/SIGTERM finishes the exchanges in flight and returns (uvicorn's own
        re-raises the signal once it has stopped, which would end the process before the log is flushed and the
        report written), and tells the judging at once (``on_stop``: what is queued is judged for --stop-seconds,
        then only logged)."""

        def __init__(self, config, on_stop=None) -> None:
            super().__init__(config)
            self.on_stop = on_stop

        def handle_exit(self, sig, frame) -> None:
            if self.on_stop is not None:
                self.on_stop()
            super().handle_exit(sig, frame)

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

    app = ProxyApp(options, judging.submit, judging.ask if options.enforce else None, ssl_context=ssl_context,
                   backlog=judging)
    config = uvicorn.Config(app, host=host, http=RawHeaders, ws="none", lifespan="on", log_level="warning",
                            access_log=False, server_header=False, date_header=False, proxy_headers=False,
                            timeout_keep_alive=max(1, round(options.idle_timeout)),
                            timeout_graceful_shutdown=int(options.limits.seconds) + 5)
    server = _server_class()(config, judging.stopping)
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
@click.option("--header-timeout", default=HEADER_TIMEOUT, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="Seconds a client has for a request's line and headers (from its connection or its first byte): "
                   "then 408 and the connection closed; a connection that sent nothing is closed.")
@click.option("--idle-timeout", default=IDLE_TIMEOUT, show_default=True,
              type=click.FloatRange(1), help="Seconds a kept-alive client connection may wait for its next request.")
@click.option("--max-header-bytes", default=MAX_HEADER_BYTES, show_default=True,
              type=click.IntRange(1024),
              help="Bytes of a request's line and headers (over: 431) and of an answer's (over: 502); of a "
                   "chunk's size line with its extensions, and of trailers (over: 400, or the answer cut).")
@click.option("--max-connections", default=MAX_CONNECTIONS, show_default=True, type=click.IntRange(1),
              help="Client connections open at once; one more is answered 503 and closed.")
@click.option("--max-client-connections", type=click.IntRange(1),
              help="Connections open at once from one client address (default: a quarter of --max-connections); "
                   "one more is answered 503.")
@click.option("--backlog-bytes", default=BACKLOG, show_default=True, type=click.IntRange(1),
              help="Bytes of bodies kept for the judge at once (exchanges in flight and queued); an exchange past "
                   "it is forwarded and logged as not judged.")
@click.option("--judge-seconds", default=JUDGE_SECONDS, show_default=True, type=click.FloatRange(0, min_open=True),
              help="The judge's time for one exchange; past it the exchange is logged as not judged.")
@click.option("--stop-seconds", default=STOP_SECONDS, show_default=True, type=click.FloatRange(0),
              help="After Ctrl-C or SIGTERM, the judge's time for what is queued; the rest is logged, not judged.")
@click.option("--quiet", is_flag=True, help="No line per exchange on the terminal.")
@click.option("--tls-cert", type=click.Path(dir_okay=False),
              help="TLS client certificate (PEM; the TPP's QWAC) for the connections to an https upstream.")
@click.option("--tls-key", type=click.Path(dir_okay=False), help="Its private key (PEM, unencrypted).")
@click.option("--ca-bundle", type=click.Path(dir_okay=False),
              help="Trust these CAs (PEM) for the upstream's certificate instead of the default ones.")
@click.option("--insecure", is_flag=True,
              help="Do not verify the upstream's certificate (a throwaway environment only).")
def proxy(upstream, host, port, profile_path, log_path, record_path, enforce, report_dir, preserve_host,
          request_timeout, max_response_bytes, header_timeout, idle_timeout, max_header_bytes, max_connections,
          max_client_connections, backlog_bytes, judge_seconds, stop_seconds, quiet, tls_cert, tls_key, ca_bundle,
          insecure):
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
                           preserve_host=preserve_host, profile=profile, max_connections=max_connections,
                           max_client_connections=max_client_connections, header_timeout=header_timeout,
                           idle_timeout=idle_timeout, max_header_bytes=max_header_bytes)
    judging = Judging(Outputs(None if quiet else "-", log_path, record_path), profile=profile,
                      base_path=where.base_path, origins=(where.origin,), asks=enforce, backlog=backlog_bytes,
                      judge_seconds=judge_seconds, stop_seconds=stop_seconds)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"obvalidate proxy: http://{shown}:{bound} -> {where.origin}{where.base_path}"
               f"{' (--enforce)' if enforce else ''}; Ctrl-C to stop", err=True)
    try:
        serve(options, judging, host, sock, ssl_context=ssl_context)
    finally:
        tally = judging.close()
    written = report.write(tally, report_dir, upstream, enforce=enforce) if report_dir else []
    s = report.summary(tally)
    refused = sum(s["refused_connections"].values())
    click.echo(f"obvalidate proxy: {s['exchanges']} exchanges, {s['with_findings']} with findings "
               f"({s['client_findings']} client, {s['server_findings']} server; {s['distinct_findings']} distinct; "
               f"{s['warnings']} warnings), "
               f"{s['skipped']} skipped, {s['answered_by_proxy']} answered by the proxy"
               + (f", {s['not_judged']} not judged" if s["not_judged"] else "")
               + (f", {refused} connections refused" if refused else "")
               + (f"; stopping: {s['judged'] + s['skipped']} judged, {s['only_logged']} only logged (--stop-seconds "
                  f"{stop_seconds:g})" if s["only_logged"] else "")
               + (f"; report: {', '.join(str(Path(p)) for p in written)}" if written else ""), err=True)
    for error in s["errors"]:
        click.echo(f"obvalidate proxy: {error}", err=True)
    sys.exit(EXIT_FINDINGS if report.verdict_failed(tally) else EXIT_CLEAN)
