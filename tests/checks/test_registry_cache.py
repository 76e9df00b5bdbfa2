"""The IBAN registry read from python-stdnum once and kept in the user cache (cold start: importing stdnum and
parsing its registry cost more than checking a payload)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from validator.checks import accounts

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OBVALIDATE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(accounts, "_TABLE", None)
    monkeypatch.setattr(accounts, "_REGISTRY", {})
    return tmp_path


def test_the_cached_table_is_the_registry_as_stdnum_reads_it(fresh_cache):
    from stdnum import numdb

    table = accounts._registry_table()
    (cached,) = fresh_cache.glob("iban-registry-*.json")
    assert json.loads(cached.read_text()) == table
    db = numdb.get("iban")
    for code, (structure, name) in table["countries"].items():
        props = db.info(code)[0][1]
        assert (props["bban"], props["country"]) == (structure, name)
    assert {"NO", "DE", "GB", "SE"} <= set(table["countries"]) and "XX" not in table["countries"]
    assert {"BE", "ES"} <= set(table["national"])


def test_a_damaged_cache_is_read_afresh(fresh_cache):
    accounts._registry_table()
    (cached,) = fresh_cache.glob("iban-registry-*.json")
    cached.write_text('{"countries": ')
    accounts._TABLE = None
    assert accounts._registry_table()["countries"]["NO"][0] == "4!n6!n1!n"
    assert json.loads(cached.read_text())["countries"]["NO"][0] == "4!n6!n1!n"


def test_checks_agree_with_and_without_the_cache(fresh_cache):
    samples = ["NO9386011117947", "DE89370400440532013000", "BE71096123456769", "BE68539007547035",
               "GB82WEST12345698765432", "NO9386011117948", "XX82WEST12345698765432", "DE8937040044053201300"]
    first = [accounts.check_iban(s) for s in samples]  # builds and writes the cache
    accounts._TABLE = None
    accounts._REGISTRY.clear()
    assert [accounts.check_iban(s) for s in samples] == first  # read back from it
    assert first[0] == () and first[3] and first[6] and first[7]


def test_a_warm_cache_spares_the_stdnum_import(fresh_cache):
    accounts._registry_table()
    code = ("import sys; from validator.checks.accounts import check_iban; "
            "assert check_iban('NO9386011117947') == () and check_iban('DE89370400440532013000') == (); "
            "print('stdnum' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"OBVALIDATE_CACHE_DIR": str(fresh_cache), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"
