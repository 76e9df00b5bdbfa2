"""A13 at the day's edges: "today" is the date in Europe/Oslo, whose day ends at 23:00Z in winter and 22:00Z in
summer, and on the nights the clocks change at whichever of the two the zone says. Each case is a pair one
second apart that a UTC (or any other) zone would put on the same day, so changing the validator's zone fails
them."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from validator.cli import main
from validator.context import today_in_oslo
from validator.api import Validator
from validator.rules.examples import spec_example
from validator.spec import load_spec

SPEC = load_spec()
SEPA = "createSepaCreditTransfer request rentToBerlin"

# (instant, the Oslo date it falls on)
EDGES = [
    ("2026-01-15T22:59:59Z", "2026-01-15"),  # winter (CET, UTC+1): the last second of the 15th
    ("2026-01-15T23:00:00Z", "2026-01-16"),  # ... and the first of the 16th
    ("2026-07-15T21:59:59Z", "2026-07-15"),  # summer (CEST, UTC+2)
    ("2026-07-15T22:00:00Z", "2026-07-16"),
    ("2026-03-28T22:59:59Z", "2026-03-28"),  # the evening before the clocks go forward (29 March, 01:00Z)
    ("2026-03-28T23:00:00Z", "2026-03-29"),
    ("2026-03-29T21:59:59Z", "2026-03-29"),  # the 23-hour day itself ends at 22:00Z
    ("2026-03-29T22:00:00Z", "2026-03-30"),
    ("2026-10-24T21:59:59Z", "2026-10-24"),  # the evening before the clocks go back (25 October, 01:00Z)
    ("2026-10-24T22:00:00Z", "2026-10-25"),
    ("2026-10-25T22:59:59Z", "2026-10-25"),  # the 25-hour day itself ends at 23:00Z
    ("2026-10-25T23:00:00Z", "2026-10-26"),
]


def sepa_on(day: str) -> dict:
    payload = spec_example(SPEC, SEPA)
    payload["requestedExecutionDate"] = day
    return payload


@pytest.mark.parametrize(("now", "oslo_day"), EDGES)
def test_execution_date_is_checked_against_the_oslo_day(now, oslo_day):
    validator = Validator(now=now)
    assert validator.today.isoformat() == oslo_day
    utc_day = now[:10]
    rules = {f.rule for f in validator.validate(sepa_on(utc_day), "sepa-credit-transfer").findings}
    # On the UTC date's own Oslo day the date is today (fine); once Oslo has moved on it is in the past.
    assert ("execution-date-past" in rules) == (oslo_day != utc_day)
    # The Oslo day itself is never in the past.
    assert "execution-date-past" not in {f.rule for f in validator.validate(sepa_on(oslo_day), "sepa-credit-transfer").findings}


def test_the_clock_helper_itself_follows_the_zone():
    from datetime import datetime

    for now, oslo_day in EDGES:
        assert today_in_oslo(datetime.fromisoformat(now.replace("Z", "+00:00"))).isoformat() == oslo_day


@pytest.mark.parametrize(("now", "oslo_day"), [EDGES[1], EDGES[3]])
def test_the_command_line_clock_is_the_oslo_day(tmp_path, now, oslo_day):
    path = tmp_path / "sepa.json"
    path.write_text(json.dumps(sepa_on(now[:10])), encoding="utf-8")
    result = CliRunner().invoke(main, ["--now", now, "--kind", "sepa-credit-transfer", str(path)])
    assert result.exit_code == 1
    assert f"is before today ({oslo_day}, Europe/Oslo)" in result.output
