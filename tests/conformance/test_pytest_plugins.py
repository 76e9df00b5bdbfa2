"""The two pytest plugins: the TPP's fixtures (conformance/pytest_fixtures.py, loaded by the ``pytest11`` entry point
in every project) and the bank's gate (conformance/gate/pytest_plugin.py, loaded with ``-p``). Issue 21, point 2."""
from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from conformance.gate.runner import selected

ROOT = Path(__file__).resolve().parents[2]
GATE = "conformance.gate.pytest_plugin"


def pytest_run(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- the gate's plugin
def test_collect_only_counts_the_gates_checks(tmp_path):
    """`--co` lists each check and counts them all (it listed 13 and said "3 tests collected")."""
    done = pytest_run("-p", GATE, "--ob-target", "http://127.0.0.1:9", "--ob-suite", "security,stateful", "--co",
                      "-q", cwd=tmp_path)
    listed = [line for line in done.stdout.splitlines() if line.startswith("::obvalidate-conform::")]
    expected = len(selected(("security", "stateful"), ()))
    assert len(listed) == expected > 10, done.stdout
    assert f"{expected} tests collected" in done.stdout, done.stdout
    chosen = pytest_run("-p", GATE, "--ob-target", "http://127.0.0.1:9", "--ob-suite", "security", "--co", "-q",
                        "-k", "unsigned", cwd=tmp_path)
    assert re.search(r"\b(\d+)/(\d+) tests collected \((\d+) deselected\)", chosen.stdout), chosen.stdout
    assert "::obvalidate-conform::security:unsigned" in chosen.stdout
    assert "::obvalidate-conform::security:foreign-payment" not in chosen.stdout


def test_the_gates_options_stay_beside_the_fixtures_option(tmp_path):
    done = pytest_run("-p", GATE, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for option in ("--ob-target", "--ob-suite", "--ob-check", "--ob-max-examples", "--ob-seed", "--ob-profile",
                   "--ob-cert", "--ob-key", "--ob-header", "--ob-rate-limit", "--ob-request-timeout",
                   "--ob-ca-bundle", "--ob-insecure", "--ob-sandbox-now"):
        assert option in done.stdout, option


# ---------------------------------------------------------------- the fixtures' plugin
def test_the_fixtures_are_a_pytest11_plugin():
    [entry] = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "obvalidate"]
    assert entry.value == "conformance.pytest_fixtures"


def test_a_project_not_using_the_fixtures_runs_as_without_the_plugin(tmp_path):
    """Loaded everywhere, the plugin imports nothing for a project that does not use its fixtures (no spec, no
    server, no HTTP client) and its tests run alike."""
    (tmp_path / "test_plain.py").write_text(textwrap.dedent("""
        import json, os, sys

        def test_plain():
            with open(os.environ["MODULES_FILE"], "w") as out:
                json.dump(sorted(sys.modules), out)
    """), encoding="utf-8")
    runs = {}
    for name, extra in (("with", ()), ("without", ("-p", "no:obvalidate"))):
        modules = tmp_path / f"{name}.json"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**__import__("os").environ, "MODULES_FILE": str(modules)})
        assert done.returncode == 0, done.stdout + done.stderr
        runs[name] = (set(json.loads(modules.read_text())), re.sub(r" in [0-9.]+s", "", done.stdout.splitlines()[-1]))
    assert runs["with"][1] == runs["without"][1] == "1 passed"
    added = runs["with"][0] - runs["without"][0]
    assert added <= {"conformance", "conformance.pytest_fixtures"}, sorted(added)
    assert not {m for m in runs["with"][0] if m.startswith(("validator", "conformance.sandbox", "uvicorn", "httpx"))}


FIXTURES_PROJECT = '''
import datetime as dt
import pytest

SEEN = {}


def test_the_option_starts_the_clock(ob_sandbox, ob_client):
    assert ob_sandbox.today() == dt.date(2033, 5, 2)
    assert abs((ob_client.clock() - ob_sandbox.now()).total_seconds()) < 60
    SEEN["plain"] = ob_sandbox.url
    customers = ob_client.call("listSandboxCustomers").json()   # a fresh database: the fixed test data (A32)
    assert "13039319955" in [c["customerNumber"] for c in customers]


@pytest.mark.ob_now("2031-03-14T23:30:00Z")
def test_a_marker_sets_the_clock(ob_sandbox, ob_client):
    assert ob_sandbox.today() == dt.date(2031, 3, 15)            # Oslo's day
    answer = ob_client.call("createSepaCreditTransfer")
    assert answer.status_code == 201, answer.text
    assert ob_sandbox.url == SEEN["plain"]                        # the session's sandbox, its clock moved


def test_the_clock_is_put_back_after_a_test(ob_sandbox):
    assert ob_sandbox.today() == dt.date(2033, 5, 2)
    ob_sandbox.set_clock("2030-01-01T12:00:00Z")


def test_set_clock_too(ob_sandbox):
    assert ob_sandbox.today() == dt.date(2033, 5, 2)


@pytest.mark.ob_faults("created-200")
def test_a_fault_marker_gets_a_sandbox_with_the_switch(ob_sandbox, ob_client):
    assert ob_sandbox.faults == ("created-200",) and ob_sandbox.url != SEEN["plain"]
    assert ob_client.call("createSepaCreditTransfer", query={"allowLogicalDuplicate": "true"}).status_code == 200


def test_the_sca_page_refuses_another_customer(ob_sandbox, ob_client):
    where = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
    pid = ob_client.call("createSepaCreditTransfer", query={"allowLogicalDuplicate": "true"}).json()["paymentId"]
    started = ob_client.call("startPaymentAuthorisation", path={**where, "paymentId": pid},
                             headers={"TPP-Redirect-URI": "https://tpp.example.no/cb", "TPP-Session-ID": "s-1"})
    outcome = ob_sandbox.authorise(started, "24068712346")       # Ola does not own Kari's account
    assert outcome.status in (302, 303) and not outcome.succeeded and outcome.query["message"]
    status = ob_client.call("getPaymentStatus", path={**where, "paymentId": pid}).json()
    assert status["transactionStatus"] == "RJCT"


def test_the_identity_is_the_sessions(ob_identity, ob_client):
    assert ob_client.identity is ob_identity


@pytest.mark.ob_faults("no-such-switch")
def test_an_unknown_switch_is_an_error(ob_sandbox):
    pass


@pytest.mark.ob_now("yesterday")
def test_a_wrong_instant_is_an_error(ob_sandbox):
    pass
'''


def test_the_fixtures_in_a_tpp_project(tmp_path):
    (tmp_path / "test_tpp.py").write_text(FIXTURES_PROJECT, encoding="utf-8")
    done = pytest_run("-q", "--ob-sandbox-now", "2033-05-02T06:00:00Z", "-p", "no:randomly", cwd=tmp_path)
    summary = done.stdout.splitlines()[-1]
    assert "7 passed" in summary and "2 errors" in summary and "failed" not in summary, done.stdout + done.stderr
    assert "ob_faults: unknown fault switch no-such-switch" in done.stdout
    assert "During handling of the above exception" not in done.stdout   # the message once, not chained twice
    assert "ob_now: not an ISO 8601 instant: 'yesterday'" in done.stdout


CLOCKS_PROJECT = '''
import time

import pytest

SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}


def pending(ob_sandbox, ob_client):
    """A payment of Kari's for today authorised on the SCA page: PDNG, waiting for the next batch run."""
    body = {**ob_client.default_body("createSepaCreditTransfer"),
            "requestedExecutionDate": ob_sandbox.today().isoformat(), "instructedAmount": {"amount": "1.50", "currency": "EUR"}}
    created = ob_client.call("createSepaCreditTransfer", query={"allowLogicalDuplicate": "true"}, body=body)
    pid = created.json()["paymentId"]
    started = ob_client.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid},
                             headers={"TPP-Redirect-URI": "https://tpp.example.no/cb", "TPP-Session-ID": "s-1"})
    assert ob_sandbox.authorise(started, "13039319955").succeeded
    assert status(ob_client, pid) == "PDNG"
    return pid


def status(ob_client, pid):
    return ob_client.call("getPaymentStatus", path={**SEPA, "paymentId": pid}).json()["transactionStatus"]


@pytest.mark.ob_now("2031-03-20T08:30:00+01:00", frozen=True)
def test_a_later_day_first(ob_sandbox, ob_client):
    pid = pending(ob_sandbox, ob_client)
    time.sleep(0.3)
    assert ob_sandbox.now().isoformat() == "2031-03-20T07:30:00+00:00"      # frozen: no time passed
    ob_sandbox.set_clock("2031-03-20T09:05:00+01:00")                      # past the 09:00 run
    assert status(ob_client, pid) == "ACSC"


@pytest.mark.ob_now("2031-03-14T08:59:58+01:00", frozen=False)
def test_an_earlier_day_after_it_gets_its_run(ob_sandbox, ob_client):
    pid = pending(ob_sandbox, ob_client)
    deadline = time.monotonic() + 8
    while status(ob_client, pid) != "ACSC":                                # the clock runs past 09:00 by itself
        assert time.monotonic() < deadline, f"still PDNG at {ob_sandbox.now()}"
        time.sleep(0.2)


def test_the_session_clock_is_frozen(ob_sandbox):
    first = ob_sandbox.now()
    time.sleep(0.3)
    assert ob_sandbox.now() == first
'''


def test_batch_runs_follow_each_tests_clock_in_either_order(tmp_path):
    """Issue 29, point 4: the scheduled runs follow the clock a test sets, whatever the tests before it did to the
    clock -- a test whose day is earlier than the last test's still gets its 09:00 run (it was "still PDNG") -- and
    a frozen clock moves only when the test moves it."""
    (tmp_path / "test_clocks.py").write_text(CLOCKS_PROJECT, encoding="utf-8")
    for order in (("test_a_later_day_first", "test_an_earlier_day_after_it_gets_its_run"),
                  ("test_an_earlier_day_after_it_gets_its_run", "test_a_later_day_first")):
        done = pytest_run("-q", "--ob-sandbox-clock", "frozen", "-p", "no:randomly",
                          *(f"test_clocks.py::{name}" for name in (*order, "test_the_session_clock_is_frozen")),
                          cwd=tmp_path)
        assert re.search(r"\b3 passed\b", done.stdout.splitlines()[-1]), done.stdout + done.stderr


def test_a_wrong_session_instant_stops_the_run(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    done = pytest_run("-q", "--ob-sandbox-now", "tomorrow", cwd=tmp_path)
    assert done.returncode == 4 and "--ob-sandbox-now: not an ISO 8601 instant: 'tomorrow'" in done.stderr


def test_the_readme_example_runs_as_written():
    """examples/test_tpp_client.py, the README's "Testing your TPP client" file: fixture, strategies, signed calls,
    the SCA page walked, a batch run and the booking read, run by pytest as a TPP runs it."""
    done = pytest_run("examples/test_tpp_client.py", cwd=ROOT)  # the repository's addopts: -q
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b7 passed\b", done.stdout.splitlines()[-1]), done.stdout


def test_the_readme_shows_the_example_file_whole():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Testing your TPP client", 1)[1].split("\n## ", 1)[0]
    [shown] = re.findall(r"```python\n(.*?)\n```", section, re.S)
    assert shown + "\n" == (ROOT / "examples" / "test_tpp_client.py").read_text(encoding="utf-8")


def test_the_sca_browser_sends_every_field_of_the_form():
    """ob_sandbox.authorise submits the form as a browser does: hidden fields (an anti-CSRF token) with it."""
    from conformance.pytest_fixtures import _read_form

    page = ('<form method="post" action="/sca/t0k&amp;n=1"><input type="hidden" name="csrf" value="a&amp;b">'
            '<input name="customerNumber"></form><form action="/elsewhere"><input name="other"></form>')
    assert _read_form(page) == ("/sca/t0k&n=1", [("csrf", "a&b"), ("customerNumber", "")])
    assert _read_form("<p>no form</p>") == (None, [])
