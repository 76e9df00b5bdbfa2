"""`obvalidate edge-cases`: the contract's edges and how the validator (and a target) answer them, as a report.

Registered through the ``obvalidate.commands`` entry-point group (pyproject.toml). Exit codes: 0 the report was
written (with no disagreement when there is a target), 1 the target disagrees with the validator on some edge,
2 the run could not happen (bad options, unreachable target).
"""
from __future__ import annotations

import datetime as _dt
import sys

import click

from conformance.bounded import DEFAULT_MAX_BYTES, DEFAULT_SECONDS as TIMEOUT
from conformance.gate.cli import connection_options
from validator.formats.escape import printable

EXIT_CLEAN, EXIT_DISAGREE, EXIT_IMPOSSIBLE = 0, 1, 2


class EdgeUsageError(click.UsageError):
    exit_code = EXIT_IMPOSSIBLE


class Progress:
    """One live line on a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.enabled:
            click.echo(f"\r\033[K[{done}/{total}] {printable(what[:100])}", nl=False, err=True)

    def close(self) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False, err=True)


@click.command("edge-cases")
@click.option("--target", default="none", show_default=True, metavar="URL|reference|none",
              help="Base URL of an implementation, 'reference' (the bundled sandbox on a free loopback port) or "
                   "'none' (the validator alone: the report documents the contract).")
@click.option("--kind", "kinds", multiple=True, metavar="K", help="Only these request kinds (repeatable).")
@click.option("--max-examples", default=10, show_default=True, type=click.IntRange(1, 10_000),
              help="Hypothesis examples per rule and kind in the search for disagreements (with a target).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**32 - 1),
              help="Seed of the search: the same seed searches the same cases.")
@click.option("--today", metavar="YYYY-MM-DD",
              help="The day in Europe/Oslo the validator judges dates by (--target none; a target uses its clock).")
@click.option("--out", "out_dir", default="edge-cases", show_default=True, type=click.Path(file_okay=False),
              help="Directory for report.html, report.md and report.json.")
@click.option("--profile", "profile_path", type=click.Path(exists=True, dir_okay=False),
              help="Implementer profile (YAML) for the validator (and the reference sandbox).")
@click.option("--fault", "faults", multiple=True, metavar="NAME",
              help="Reference target only: turn a sandbox fault switch on (see `obvalidate sandbox faults`).")
@connection_options
@click.option("--request-timeout", default=TIMEOUT, show_default=True, type=click.FloatRange(0, min_open=True),
              metavar="S", help="Seconds a request may take in all, its whole answer included; a case without one "
                                "is answered 'no answer' (measured) and the run goes on.")
@click.option("--max-response-bytes", default=DEFAULT_MAX_BYTES, show_default=True, type=click.IntRange(1),
              metavar="N", help="The most bytes an answer's body may have; a longer one is cut there, the case "
                                "answered 'no answer' (measured).")
def edge_cases(target: str, kinds: tuple[str, ...], max_examples: int, seed: int, today: str | None, out_dir: str,
               profile_path: str | None, faults: tuple[str, ...], request_timeout: float = TIMEOUT,
               max_response_bytes: int = DEFAULT_MAX_BYTES, cert: str | None = None, key: str | None = None,
               headers: tuple[str, ...] = (), rate_limit: float | None = None, wait_for_target: float | None = None,
               tls_cert: str | None = None, tls_key: str | None = None, ca_bundle: str | None = None,
               insecure: bool = False) -> None:
    """Write a report of the contract's edges: every constrained field and semantic rule of the spec at its
    boundaries (lengths, enums, int32, dates around today in Europe/Oslo, amounts per minor-unit class, IBAN, BBAN,
    KID, national identity numbers, remittance and basket combinations), the validator's verdict on each and — with
    a target — the target's answer, agree or disagree, and a curl reproducer. With a target, a Hypothesis search for
    disagreements adds what it finds, shrunk to minimal examples. A bank's environment is reached as `conform`
    reaches it: --cert/--key, -H, --rate-limit, --tls-cert/--tls-key, --ca-bundle or --insecure."""
    from conformance.gate.cli import _check_reachable, _headers, _identities, _tls
    from conformance.gate.pool import GatewayOptions
    from conformance.gate.session import TargetUnreachable, TlsFailure
    from conformance.gate.target import REFERENCE, serving
    from validator.context import ConfigError, Profile
    from validator.spec import load_spec

    from . import report
    from .run import NO_TARGET, run

    if target not in (NO_TARGET, REFERENCE) and not target.startswith(("http://", "https://")):
        raise EdgeUsageError(f"--target must be an http(s) URL, 'reference' or 'none', not {target!r}")
    if faults and target != REFERENCE:
        raise EdgeUsageError("--fault applies to --target reference only")
    if today and target != NO_TARGET:
        raise EdgeUsageError("--today applies to --target none: a target judges dates by its own clock")
    spec = load_spec()
    unknown = [k for k in kinds if k not in spec.kinds or not spec.kind(k).is_request]
    if unknown:
        known = ", ".join(k for k, v in spec.kinds.items() if v.is_request)
        raise EdgeUsageError(f"unknown request kind {', '.join(unknown)} (the request kinds: {known})")
    try:
        day = _dt.date.fromisoformat(today) if today else None
    except ValueError:
        raise EdgeUsageError(f"--today must be a date YYYY-MM-DD, not {today!r}") from None
    try:
        profile = Profile.load(profile_path) if profile_path else None
    except ConfigError as exc:
        raise EdgeUsageError(str(exc)) from None
    connected = (cert, headers, rate_limit, wait_for_target is not None, tls_cert, tls_key, ca_bundle, insecure)
    if target == NO_TARGET and any(connected):
        raise EdgeUsageError("the connection options (--cert, -H, --rate-limit, --wait-for-target, --tls-cert, "
                             "--ca-bundle, --insecure) need a --target")
    identities = _identities(cert, key, None, None)
    gateway = GatewayOptions(_headers(headers), rate_limit, request_timeout, max_response_bytes)
    tls = _tls(tls_cert, tls_key, ca_bundle, insecure)
    progress = Progress(sys.stderr.isatty())
    options = dict(today=day, kinds=kinds, seed=seed, max_examples=max_examples, profile=profile, faults=faults,
                   progress=progress, gateway=gateway, tls=tls, identities=identities)
    try:
        if target == NO_TARGET:
            result = run(spec, base_url=None, target=target, **options)
        else:
            with serving(target, faults=faults, profile=profile) as base_url:
                _check_reachable(base_url, wait_for_target, tls, gateway)
                result = run(spec, base_url=base_url, target=target, **options)
    except (TargetUnreachable, TlsFailure, click.ClickException) as exc:
        progress.close()
        message = exc.format_message() if isinstance(exc, click.ClickException) else exc
        click.echo(printable(f"Error: {message}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    except ValueError as exc:  # an unknown fault switch, a kind without edges (run.NoEdges)
        raise EdgeUsageError(str(exc)) from None
    progress.close()
    paths = report.write(result, out_dir)
    click.echo(report.text(result), nl=False)
    click.echo("wrote " + ", ".join(str(p) for p in paths))
    sys.exit(EXIT_DISAGREE if any(c.agree is False for c in result.cases) else EXIT_CLEAN)
