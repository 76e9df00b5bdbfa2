"""`obvalidate conform`: the conformance gate on the command line.

Registered through the ``obvalidate.commands`` entry-point group (pyproject.toml); the validator's command line loads
it only when named. Exit codes: 0 every check passed, 1 findings (or a check broke), 2 the run could not happen
(unreachable target, bad options).
"""
from __future__ import annotations

import sys

import click

from validator.formats.escape import printable

from .model import SUITES
from .pool import DEFAULT_MAX_BYTES, DEFAULT_MAX_CONNECTIONS
from .progress import Progress, progress_mode

EXIT_CLEAN, EXIT_FINDINGS, EXIT_IMPOSSIBLE = 0, 1, 2


class ConformUsageError(click.UsageError):
    exit_code = EXIT_IMPOSSIBLE


def _suites(value: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(s.strip() for s in value.split(",") if s.strip()))
    unknown = [n for n in names if n not in SUITES]
    if unknown or not names:
        raise ConformUsageError(f"unknown suite {', '.join(unknown) or '(none)'}; the suites are {', '.join(SUITES)}")
    return names


def _identities(cert, key, second_cert, second_key):
    from conformance.client import Identity

    from .session import Identities

    if bool(cert) != bool(key) or bool(second_cert) != bool(second_key):
        raise ConformUsageError("--cert and --key go together (so do --second-cert and --second-key)")
    if second_cert and not cert:
        raise ConformUsageError("--second-cert needs --cert")
    throwaway = Identities.throwaway()
    try:
        first = Identity.from_files(key, cert) if cert else throwaway.tpp
        second = Identity.from_files(second_key, second_cert) if second_cert else throwaway.other
    except Exception as exc:  # noqa: BLE001 - any unusable key or certificate is a usage error
        raise ConformUsageError(f"cannot use the signing identity: {exc}") from None
    return Identities(first, second)


def _headers(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    from .pool import parse_header

    headers = []
    for text in values:
        try:
            headers.append(parse_header(text))
        except ValueError as exc:
            raise ConformUsageError(f"-H/--header: {exc}") from None
    names = [n.lower() for n, _v in headers]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConformUsageError(f"-H/--header: {', '.join(twice)} given more than once")
    return tuple(headers)


def _tls(cert, key, ca_bundle, insecure):
    """The run's TLS options, checked now: a file that cannot be used ends the run before it starts (exit 2)."""
    from .tls import TlsConfigError, TlsOptions

    if not (cert or key or ca_bundle or insecure):
        return None
    try:
        tls = TlsOptions(cert, key, ca_bundle, insecure)
        tls.context()
    except TlsConfigError as exc:
        click.echo(printable(f"Error: {exc}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    if insecure:
        click.echo("Warning: --insecure: the target's certificate is not verified; anyone on the way can read and "
                   "alter the run's requests. The report records it.", err=True)
    return tls


def _replay(target, replay_path, finding_names, identities, faults, profile, profile_path, max_connections,
            fmt, gateway, tls=None, wait_for_target: float | None = None) -> None:
    """``conform --replay``: the report's findings (or the chosen ones) replayed against the target, reached as a run
    reaches it (TLS, -H headers, rate limit, timeouts, the environment's proxy); exits."""
    from validator.formats.json_format import dumps

    from . import replay
    from .session import TargetUnreachable, TlsFailure
    from .target import serving

    try:
        report = replay.load(replay_path)
        chosen = replay.select(report["findings"], finding_names)
    except replay.ReportUnreadable as exc:
        click.echo(printable(f"Error: {exc}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    except ValueError as exc:
        raise ConformUsageError(str(exc)) from None
    try:
        with serving(target, faults=faults, profile=profile) as base_url:
            _check_reachable(base_url, wait_for_target, tls, gateway)
            verdicts = replay.replay(report, chosen, base_url, identities, profile, profile_path, max_connections,
                                     gateway, tls)
    except (TargetUnreachable, TlsFailure, click.ClickException) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else exc
        click.echo(printable(f"Error: {message}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    if fmt == "json":
        click.echo(dumps([v.as_dict() for v in verdicts]))
    else:
        click.echo(replay.text(verdicts), nl=False)
    sys.exit(EXIT_FINDINGS if any(v.status == replay.STILL_FAILING for v in verdicts) else EXIT_CLEAN)


def _check_reachable(base_url: str, wait_for_target: float | None, tls, gateway) -> None:
    """A ClickException saying why the target does not answer as the run reaches it (after --wait-for-target)."""
    from .target import reachable, wait_for

    def problem_of(url: str, timeout: float = 10.0) -> str | None:
        return reachable(url, min(timeout, gateway.timeout), tls=tls, headers=gateway.headers,
                         max_response_bytes=gateway.max_response_bytes)

    problem = wait_for(base_url, wait_for_target, problem_of=problem_of) if wait_for_target is not None \
        else problem_of(base_url)
    if problem:
        raise click.ClickException(problem)


def connection_options(command):
    """The options that reach a target as a bank's environment wants it reached, the same for ``conform`` (and its
    ``--replay``) and ``edge-cases``: the signing identity, the gateway's headers and rate limit, TLS, waiting for a
    server still starting."""
    options = [
        click.option("--cert", type=click.Path(exists=True, dir_okay=False), help="TPP certificate (PEM)."),
        click.option("--key", type=click.Path(exists=True, dir_okay=False), help="Its private key (PEM)."),
        click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                     help="A header the target's gateway needs (X-IBM-Client-Id: ...), sent on every request to the "
                          "target (repeatable): never signed, never judged as not accepted."),
        click.option("--rate-limit", type=click.FloatRange(0, min_open=True), metavar="N",
                     help="Requests per second for the whole run (workers included). A 429 is waited for "
                          "(Retry-After, at most 60 s) and sent again, up to 3 times; then it is a rate-limited "
                          "finding."),
        click.option("--wait-for-target", type=click.FloatRange(0), metavar="S",
                     help="Poll the target until it answers, for at most S seconds (a server still starting), then "
                          "run; exit 2 if it never answers."),
        click.option("--tls-cert", type=click.Path(dir_okay=False),
                     help="TLS client certificate (PEM; the TPP's QWAC, not the signing --cert) for every "
                          "connection."),
        click.option("--tls-key", type=click.Path(dir_okay=False), help="Its private key (PEM, unencrypted)."),
        click.option("--ca-bundle", type=click.Path(dir_okay=False),
                     help="Trust these CAs (PEM) for the target's certificate instead of the default ones."),
        click.option("--insecure", is_flag=True,
                     help="Do not verify the target's certificate (a throwaway environment only; warns, and the "
                          "report says so)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command("conform")
@click.option("--target", default="reference", show_default=True, metavar="URL|reference",
              help="Base URL of the implementation, or 'reference': the bundled sandbox on a free loopback port "
                   "with a fresh database.")
@click.option("--profile", "profile_path", type=click.Path(exists=True, dir_okay=False),
              help="Implementer profile (YAML) for the oracle (and the reference sandbox).")
@connection_options
@click.option("--suite", "suites", default=",".join(SUITES), show_default=True,
              help="Comma-separated suites to run.")
@click.option("--check", "check_patterns", default="", metavar="PATTERNS",
              help="Comma-separated check ids or glob patterns (e.g. 'security:*,semantic:amount-*'); default all.")
@click.option("--test-data", "test_data_path", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="The target's fixed test data (the bank states it: the document does not show it), in the format "
                   "of `obvalidate sandbox serve --test-data`: its accounts' numbers and currencies are used where "
                   "the target's answers do not show them. With --target reference, the sandbox serves it.")
@click.option("--second-cert", type=click.Path(exists=True, dir_okay=False),
              help="A second TPP's certificate, for the cross-TPP checks (A28).")
@click.option("--second-key", type=click.Path(exists=True, dir_okay=False), help="Its private key (PEM).")
@click.option("--max-examples", default=10, show_default=True, type=click.IntRange(1, 10_000),
              help="Hypothesis examples per rule and operation (semantic suite) or per operation (schema, negative; "
                   "the negative suite's coverage phase adds up to 3x as many).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**32 - 1),
              help="Seed of the generated cases: the same seed sends the same cases.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 16),
              help="Processes to spread the suites over.")
@click.option("--max-connections", default=DEFAULT_MAX_CONNECTIONS, show_default=True, type=click.IntRange(1, 1000),
              help="Connections to the target open at once, for the whole run (kept alive and shared by every check; "
                   "with --workers, divided among them, at least one each). Keep it under the target's limit.")
@click.option("--request-timeout", default=30.0, show_default=True, type=click.FloatRange(0, min_open=True),
              metavar="S", help="Seconds a request may take in all: connecting, interim 1xx answers, headers and the "
                                "whole body. A request without a whole answer by then is a request-timeout finding "
                                "(once per operation, measured) and the run goes on.")
@click.option("--max-response-bytes", default=DEFAULT_MAX_BYTES, show_default=True, type=click.IntRange(1),
              metavar="N", help="The most bytes an answer's body may have (after gzip/deflate): a longer one is cut "
                                "there and is an answer-too-large finding (once per operation, measured).")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="URL",
              help="An origin (scheme://host[:port]) besides the target's that links may lead to, such as the SCA "
                   "page's host (repeatable). A link to any other origin is a link-off-target finding, never a "
                   "request.")
@click.option("--report-dir", type=click.Path(file_okay=False),
              help="Write conform.json, conform.junit.xml, conform.html, conform.sarif and coverage.json here.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "github", "sarif"]), default="text",
              show_default=True,
              help="What to print on standard output: github prints workflow annotations (one per finding), sarif a "
                   "SARIF 2.1.0 log.")
@click.option("-q", "--quiet", is_flag=True,
              help="No progress on standard error (by default a live line on a terminal, plain periodic lines "
                   "otherwise).")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Compare with a baseline (--write-baseline): each finding is known or new, the summary counts "
                   "known, new and resolved; exit 1 only for new findings.")
@click.option("--write-baseline", "write_baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Store this run's findings (fingerprints, sorted, with rule, operation, checks and a title) as a "
                   "baseline to review and commit.")
@click.option("--strict", is_flag=True,
              help="Adopt every decision of ours where the document leaves a point open (the profile's "
                   "pinned-decisions: all): an answer following another reading is a failure, not a difference.")
@click.option("--full-curl", is_flag=True,
              help="Findings' curls carry the TPP certificate and long headers (left out by default).")
@click.option("--fault", "faults", multiple=True, metavar="NAME", hidden=True,
              help="Reference target only: turn a sandbox fault switch on (to see the gate catch it).")
@click.option("--replay", "replay_path", metavar="CONFORM.JSON",
              help="Replay the findings of an earlier run's report against --target: each request re-sent, signed "
                   "anew (or its check run again where one request cannot re-create it), judged again: fixed, still "
                   "failing or not replayable. Exit 0 when none still fails.")
@click.option("--finding", "finding_names", multiple=True, metavar="ID|FINGERPRINT",
              help="With --replay: only this finding (repeatable).")
def conform(target: str, profile_path: str | None, suites: str, check_patterns: str, cert, key, second_cert, second_key,
            max_examples: int, seed: int, workers: int, max_connections: int, headers: tuple[str, ...],
            rate_limit: float | None, request_timeout: float, wait_for_target: float | None, report_dir: str | None,
            fmt: str, faults: tuple[str, ...], baseline_path: str | None = None, write_baseline: str | None = None,
            full_curl: bool = False, replay_path: str | None = None, finding_names: tuple[str, ...] = (),
            tls_cert: str | None = None, tls_key: str | None = None, ca_bundle: str | None = None,
            insecure: bool = False, quiet: bool = False, max_response_bytes: int = DEFAULT_MAX_BYTES,
            allow_origins: tuple[str, ...] = (), test_data_path: str | None = None,
            strict: bool = False) -> None:
    """Test an implementation of the interface against the documented and decided behaviour.

    Suites: schema (Schemathesis positive generation per operation, every answer checked against the spec and the
    validator's prediction), negative (Schemathesis negative mode and coverage phase: schema-invalid requests
    refused with the A7 code), security (signatures, certificates, another TPP's payments), semantic (the
    differential oracle: requests breaking one rule of the validator's catalogue, the validator predicting each
    answer), stateful (the
    payment lifecycle, baskets, cancellation, X-Request-ID replay, duplicates, pagination, concurrency).
    Findings come in two tiers: failures (the answer contradicts the interface document) and differences (it follows
    another reading of a point the document leaves open than our decision; never failing the run unless the profile
    pins the decision, or --strict pins them all).
    Exit 0: no failure (differences reported); 1: failures (with --baseline: new ones); 2: the run could not happen.
    """
    from validator.formats.json_format import dumps

    from . import report
    from .runner import RunOptions, run, selected
    from .session import TargetUnreachable, TlsFailure
    from .target import REFERENCE, serving

    chosen = _suites(suites)
    patterns = tuple(p.strip() for p in check_patterns.split(",") if p.strip())
    if patterns and not selected(chosen, patterns):
        raise ConformUsageError(f"no check of the suites {', '.join(chosen)} matches {check_patterns!r}")
    identities = _identities(cert, key, second_cert, second_key)
    gateway_headers = _headers(headers)
    allowed_origins = _allowed_origins(allow_origins)
    if faults and target != REFERENCE:
        raise ConformUsageError("--fault applies to --target reference only")
    if target != REFERENCE and not target.startswith(("http://", "https://")):
        raise ConformUsageError(f"--target must be an http(s) URL or 'reference', not {target!r}")
    profile = None
    if profile_path:
        from validator.context import ConfigError, Profile

        try:
            profile = Profile.load(profile_path)
        except ConfigError as exc:
            raise ConformUsageError(str(exc)) from None
    test_data = _test_data(test_data_path)
    known = _baseline(baseline_path)
    tls = _tls(tls_cert, tls_key, ca_bundle, insecure)
    if finding_names and not replay_path:
        raise ConformUsageError("--finding goes with --replay")
    from .pool import GatewayOptions

    gateway = GatewayOptions(gateway_headers, rate_limit, request_timeout, max_response_bytes,
                             allowed_origins=allowed_origins)
    if replay_path:
        _replay(target, replay_path, finding_names, identities, faults, profile, profile_path, max_connections, fmt,
                gateway, tls, wait_for_target)
    progress = Progress(progress_mode(quiet, fmt), selected(chosen, patterns))
    try:
        with serving(target, faults=faults, profile=profile, test_data=test_data) as base_url:
            _check_reachable(base_url, wait_for_target, tls, gateway)
            progress.start(base_url)
            options = RunOptions(base_url, chosen, profile_path, identities, seed, max_examples, workers, patterns,
                                 max_connections, tls=tls)
            options.full_curl = full_curl
            options.headers, options.rate_limit, options.request_timeout = gateway_headers, rate_limit, request_timeout
            options.max_response_bytes = max_response_bytes
            options.allowed_origins = allowed_origins
            options.test_data = test_data_path
            options.strict = strict
            result = run(options, progress=progress)
    except TlsFailure as exc:
        progress.close()
        click.echo(printable(f"Error: {exc}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    except TargetUnreachable as exc:
        progress.close()
        click.echo(printable(f"Error: the target stopped answering: {exc}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    except click.ClickException as exc:
        progress.close()
        click.echo(printable(f"Error: {exc.format_message()}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
    except ValueError as exc:  # an unknown fault switch
        progress.close()
        raise ConformUsageError(str(exc)) from None
    progress.close(result)
    result.baseline = known
    if write_baseline:
        _write_baseline(result, write_baseline)
    if report_dir:
        report.write(result, report_dir)
    if fmt == "json":
        click.echo(dumps(report.as_json(result)))
    elif fmt == "junit":
        click.echo(report.junit(result), nl=False)
    elif fmt == "github":
        click.echo(report.github(result), nl=False)
    elif fmt == "sarif":
        click.echo(report.sarif(result), nl=False)
    else:
        click.echo(report.text(result), nl=False)
    failed = report.gating(result) or any(o.status == "error" for o in result.outcomes)
    sys.exit(EXIT_FINDINGS if failed else EXIT_CLEAN)


def _allowed_origins(values: tuple[str, ...]) -> tuple[str, ...]:
    """The --allow-origin values, each an http(s) origin; a usage error (exit 2) saying what is wrong otherwise."""
    from conformance.exchange.origins import parse_allowed

    for text in values:
        try:
            parse_allowed(text)
        except ValueError as exc:
            raise ConformUsageError(f"--allow-origin: {exc}") from None
    return tuple(values)


def _test_data(path: str | None):
    """The --test-data set, read before the run: a file that cannot be used stops it (exit 2, saying where)."""
    if not path:
        return None
    from conformance.sandbox.testdata import DataSetError, load

    try:
        return load(path)
    except DataSetError as exc:
        raise ConformUsageError(str(exc)) from None


def _baseline(path: str | None):
    """The baseline to compare with, read before the run: an unreadable or malformed one stops it (exit 2)."""
    if not path:
        return None
    from .baseline import BaselineError, load

    try:
        return load(path)
    except BaselineError as exc:
        click.echo(printable(f"Error: {exc}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)


def _write_baseline(result, path: str) -> None:
    from . import report
    from .baseline import write

    try:
        write([g for g in report.groups(result) if g.tier == "failure"], path)
    except OSError as exc:
        click.echo(printable(f"Error: cannot write the baseline {path}: {exc}"), err=True)
        sys.exit(EXIT_IMPOSSIBLE)
