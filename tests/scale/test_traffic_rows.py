"""Recorded traffic judged one partition per TPP gives exactly the findings of the single-process ``obvalidate
traffic`` (issue 30): foreign resources, a status going backwards and a client's defect, across two TPPs and their
PSU's browser, in one process (the partitions as an engine's tasks)."""
from __future__ import annotations

import pytest

from scale_archive import assert_same_rows
from scale_traffic import cli_traffic_rows, write_log

pytest.importorskip("pyarrow")
pytest.importorskip("fsspec")

from conformance.scale import driver, job  # noqa: E402
from conformance.scale.traffic import TrafficSettings, exchanges_of, partitions  # noqa: E402


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    return write_log(tmp_path_factory.mktemp("traffic"))


def test_partitions_per_tpp_give_the_single_process_findings(log, tmp_path):
    settings = TrafficSettings()
    expected, summary = cli_traffic_rows(log, settings.profile_digest)
    assert {(r["party"], r["rule"]) for r in expected} >= {
        ("server", "foreign-resource-visible"), ("server", "status-backwards"), ("client", "amount-minor-units")}
    tally, tpps = driver.traffic(driver.sequential, [str(log)], settings, str(tmp_path / "out"))
    assert tpps == 3   # TPP A, TPP B, and the PSU's browser (no certificate)
    assert_same_rows(job.read_rows(str(tmp_path / "out")), expected)
    assert (tally.read, tally.judged) == (summary["entries"], summary["judged"])
    assert dict(tally.not_judged) == summary["skipped_by_reason"]


def test_each_partition_is_one_tpp_in_time_order_with_the_others_teaching_exchanges(log):
    groups = partitions(exchanges_of((0, str(log))))
    for group in groups:
        own = {exchange.tpp for exchange, mine in group if mine}
        assert len(own) == 1
        keys = [(e.at, e.file, e.line) for e, _mine in group]
        assert keys == sorted(keys)
        assert all(e.teaches and e.tpp not in own for e, mine in group if not mine)
