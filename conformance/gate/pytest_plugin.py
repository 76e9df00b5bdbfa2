"""The conformance gate under pytest: one test per check, the same checks and findings as ``obvalidate conform``.

    pytest -p conformance.gate.pytest_plugin --ob-target http://127.0.0.1:8080 [--ob-suite security,stateful]
           [--ob-check 'semantic:amount-*'] [--ob-max-examples 10] [--ob-seed 0] [--ob-profile F]
           [--ob-cert C --ob-key K] [--ob-max-connections 8]
           [--ob-header 'Name: value' ...] [--ob-rate-limit N] [--ob-request-timeout S]
           [--ob-tls-cert C --ob-tls-key K] [--ob-ca-bundle F | --ob-insecure] [--ob-allow-origin URL ...]

``--ob-target reference`` starts the bundled reference sandbox for the session. Without ``--ob-target`` the plugin
adds nothing. A check with findings fails with each finding (rule, section, expected and actual answer, curl
reproducer); a check the target cannot exercise is skipped with the reason. A target that cannot be reached (a TLS
failure, said in one sentence) ends the session with exit status 2, as ``obvalidate conform`` exits.
"""
from __future__ import annotations

import pytest

from validator.formats.escape import printable

from .model import FAILURE, SUITES


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("obvalidate", "obvalidate conformance gate")
    group.addoption("--ob-target", default=None, help="Base URL of the implementation under test, or 'reference'.")
    group.addoption("--ob-suite", default=",".join(SUITES), help="Comma-separated suites.")
    group.addoption("--ob-check", default="", help="Comma-separated check id patterns.")
    group.addoption("--ob-max-examples", type=int, default=10, help="Hypothesis examples per rule and operation.")
    group.addoption("--ob-seed", type=int, default=0, help="Seed of the generated cases.")
    group.addoption("--ob-max-connections", type=int, default=None,
                    help="Connections to the target open at once (default 8), shared by every check.")
    group.addoption("--ob-profile", default=None, help="Implementer profile (YAML).")
    group.addoption("--ob-cert", default=None, help="TPP certificate (PEM); throwaway identities without it.")
    group.addoption("--ob-key", default=None, help="Its private key (PEM).")
    group.addoption("--ob-header", action="append", default=[], metavar="'Name: value'",
                    help="A gateway header sent on every request (repeatable); never signed, never judged.")
    group.addoption("--ob-rate-limit", type=float, default=None, help="Requests per second, for the session.")
    group.addoption("--ob-request-timeout", type=float, default=None,
                    help="Seconds a request may take in all, its whole answer included (30).")
    group.addoption("--ob-max-response-bytes", type=int, default=None,
                    help="The most bytes an answer's body may have (4 MiB); a longer one is cut, a finding.")
    group.addoption("--ob-tls-cert", default=None, help="TLS client certificate (PEM; the QWAC, not the signing one).")
    group.addoption("--ob-tls-key", default=None, help="Its private key (PEM).")
    group.addoption("--ob-ca-bundle", default=None, help="CAs (PEM) trusted for the target's certificate.")
    group.addoption("--ob-allow-origin", action="append", default=[], metavar="URL",
                    help="An origin besides the target's that links may lead to (repeatable); any other is a finding.")
    group.addoption("--ob-insecure", action="store_true", default=False,
                    help="Do not verify the target's certificate (warns).")


def gateway_options(opt):
    """The session's gateway options (pool.py) from the --ob-header, --ob-rate-limit, --ob-request-timeout,
    --ob-max-response-bytes and --ob-allow-origin."""
    from conformance.exchange.origins import parse_allowed
    from .pool import DEFAULT_MAX_BYTES, TIMEOUT, GatewayOptions, parse_header

    try:
        headers = tuple(parse_header(h) for h in opt("--ob-header"))
    except ValueError as exc:
        raise pytest.UsageError(f"--ob-header: {exc}") from None
    rate, timeout = opt("--ob-rate-limit"), opt("--ob-request-timeout")
    cap = opt("--ob-max-response-bytes")
    if (rate is not None and rate <= 0) or (timeout is not None and timeout <= 0) or (cap is not None and cap < 1):
        raise pytest.UsageError("--ob-rate-limit, --ob-request-timeout and --ob-max-response-bytes are positive "
                                "numbers")
    allowed = tuple(opt("--ob-allow-origin") or ())
    for text in allowed:
        try:
            parse_allowed(text)
        except ValueError as exc:
            raise pytest.UsageError(f"--ob-allow-origin: {exc}") from None
    return GatewayOptions(headers, rate, timeout or TIMEOUT, cap or DEFAULT_MAX_BYTES, allowed_origins=allowed)


class _Run:
    """The session's target and Session, opened on first use."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session = None
        self._serving = None

    def get(self):
        if self.session is None:
            from conformance.client import Identity
            from validator.context import DEFAULT_PROFILE, Profile
            from validator.spec import load_spec

            from .session import Identities, Session
            from .target import reachable, serving
            from .tls import TlsConfigError, TlsOptions

            opt = self.config.getoption
            try:
                tls = TlsOptions(opt("--ob-tls-cert"), opt("--ob-tls-key"), opt("--ob-ca-bundle"), opt("--ob-insecure"))
                tls.context()
            except TlsConfigError as exc:
                pytest.exit(str(exc), returncode=2)
            if tls.insecure:
                import warnings

                warnings.warn("--ob-insecure: the target's certificate is not verified", stacklevel=1)
            profile = Profile.load(opt("--ob-profile")) if opt("--ob-profile") else DEFAULT_PROFILE
            self._serving = serving(opt("--ob-target"), profile=profile if opt("--ob-profile") else None)
            base_url = self._serving.__enter__()
            problem = reachable(base_url, tls=tls, headers=gateway_options(opt).headers)
            if problem:
                pytest.exit(problem, returncode=2)
            identities = Identities.throwaway()
            if opt("--ob-cert"):
                identities = Identities(Identity.from_files(opt("--ob-key"), opt("--ob-cert")), identities.other)
            limit = {"max_connections": opt("--ob-max-connections")} if opt("--ob-max-connections") else {}
            self.session = Session(base_url, load_spec(), profile, identities, seed=opt("--ob-seed"),
                                   max_examples=opt("--ob-max-examples"), gateway=gateway_options(opt), tls=tls,
                                   **limit)
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        if self._serving is not None:
            self._serving.__exit__(None, None, None)


class CheckItem(pytest.Item):
    def __init__(self, *, check, run: _Run, **kwargs) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.run = run

    def runtest(self) -> None:
        from .model import NotExercised
        from .session import TlsFailure

        session = self.run.get()
        session.begin(self.check.suite, self.check.id)
        from .pool import Unanswered

        try:
            self.check(session)
        except NotExercised as why:
            pytest.skip(printable(f"not exercised: {why}"))
        except TlsFailure as failure:  # every other check would fail alike: the session ends saying why once
            pytest.exit(printable(str(failure)), returncode=2)
        except Unanswered as problem:  # a timeout or a 429 that did not pass: its finding (once per operation)
            session.unanswered(problem)
            skipped = [o for (check_id, _op), o in session.outcomes.items()
                       if check_id == self.check.id and o.status == "not-exercised"]
            if skipped and not any(o.findings for (check_id, _op), o in session.outcomes.items()
                                   if check_id == self.check.id):
                pytest.skip(printable(f"not exercised: {skipped[0].reason}"))
        findings = [f for (check_id, _op), o in session.outcomes.items() if check_id == self.check.id
                    for f in o.findings if f.tier == FAILURE]   # a difference never fails (issue 27)
        if findings:
            raise CheckFailed(findings)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            # each line one printable line: the target's words reach the terminal and pytest's JUnit as data
            return "\n".join(line for f in excinfo.value.findings for line in (
                printable(f"{f.operation}: rule {f.rule} ({f.ref}) fingerprint {f.fingerprint}: {f.message}"),
                printable(f"  expected {f.expected}; actual {f.actual}"), printable(f"  reproduce: {f.curl}")))
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.check.id}: {self.check.title}"


class CheckFailed(Exception):
    def __init__(self, findings) -> None:
        super().__init__(f"{len(findings)} findings")
        self.findings = findings


class GateCollector(pytest.Collector):
    def __init__(self, *, run: _Run, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run = run

    def collect(self):
        from .runner import selected

        opt = self.config.getoption
        suites = tuple(s.strip() for s in opt("--ob-suite").split(",") if s.strip())
        patterns = tuple(p.strip() for p in opt("--ob-check").split(",") if p.strip())
        for chk in selected(suites, patterns):
            yield CheckItem.from_parent(self, name=chk.id, check=chk, run=self.run)


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselect, which must see the checks
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not config.getoption("--ob-target"):
        return
    run = _Run(config)
    config._obvalidate_run = run
    collector = GateCollector.from_parent(session, name="obvalidate-conform", run=run)
    # Collected as pytest collects a file: the collect report counts the checks ("N tests collected" under --co,
    # "collected N items"), each item announced to the plugins that watch collection.
    items.extend(session.genitems(collector))


def pytest_unconfigure(config: pytest.Config) -> None:
    run = getattr(config, "_obvalidate_run", None)
    if run is not None:
        run.close()
