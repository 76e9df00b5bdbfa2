"""Fixtures for the format tests; the data lives in formats_fixtures.py."""
from __future__ import annotations

import pytest

from formats_fixtures import CATALOGUE, Rule, make_reports
from validator.findings import Report


@pytest.fixture
def reports() -> list[Report]:
    return make_reports()


@pytest.fixture
def catalogue() -> dict[str, Rule]:
    return dict(CATALOGUE)
