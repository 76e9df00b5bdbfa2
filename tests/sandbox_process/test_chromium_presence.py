"""The SCA browser test's chromium: without one on PATH it skips locally (saying how to install it) and fails when
CI is set, as the Spectral and Prism tests do (issue 21: the README's test command on a fresh machine)."""
from __future__ import annotations

import pytest
from _pytest.outcomes import Failed, Skipped

from headless_chromium import chromium_executable


@pytest.fixture
def no_chromium(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no browser on PATH


def test_missing_chromium_skips_locally(no_chromium, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(Skipped, match="no chromium on PATH; install it with: apt-get install chromium"):
        chromium_executable()


def test_missing_chromium_fails_in_ci(no_chromium, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(Failed, match="CI is set"):
        chromium_executable()


def test_a_chromium_on_path_is_found(monkeypatch, tmp_path):
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n", encoding="utf-8")
    browser.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    assert chromium_executable() == str(browser)
