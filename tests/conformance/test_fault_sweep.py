"""Issue 29, point 6: one fault is one new finding. tools/fault_sweep.py counts, per fault switch, the findings its
run has that the faithful sandbox's run has not; `transaction-status-missing` gave nine under five rules (the status
checks reading a status that is not there, one of them a false cross-TPP finding "its status is None") and gives one
now: the answer's schema-required finding, every check that met it a sighting of it. No output of the sweep -- its
table, its JSON, every report of every run -- says Python's None: a missing value is "absent"."""
from __future__ import annotations

import json
import re

from tool_modules import load_tool

# The checks that read a payment's status (and met it missing), and the one the faithful sandbox must pass.
STATUS_READERS = ("stateful:lifecycle", "stateful:cancellation", "stateful:lack-of-funds", "security:foreign-payment",
                  "stateful:sca-without-effect")


def test_one_fault_is_one_new_finding_and_no_output_says_none(tmp_path, capsys):
    sweep = load_tool("fault_sweep")
    args = ["--switch", "transaction-status-missing", "--max-examples", "1", "--json", str(tmp_path / "sweep.json"),
            "--reports", str(tmp_path / "reports")]
    for check in STATUS_READERS:
        args += ["--check", check]
    code = sweep.main(args)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    faithful, faulty = json.loads((tmp_path / "sweep.json").read_text(encoding="utf-8"))["rows"]
    assert faithful["fingerprints"] == []
    assert faulty["new"] == 1 and faulty["new_rules"] == {"schema-required": 1}, faulty["new_titles"]
    assert len(faulty["checks"]) >= 4, "every status reader met it: sightings of the one finding"
    assert "| transaction-status-missing | 1 | schema-required |" in out
    outputs = {"standard output": out, "standard error": err,
               **{str(p.relative_to(tmp_path)): p.read_text(encoding="utf-8")
                  for p in tmp_path.rglob("*") if p.is_file()}}
    said_none = {name: re.findall(r".{40}\bNone\b.{20}", text) for name, text in outputs.items()
                 if re.search(r"\bNone\b", text)}
    assert not said_none, said_none
    assert len(outputs) > 10   # the table, the JSON and each run's conform.json, .txt, .github.txt, .html, ...
