"""docs/traceability.md is the current rendering of tools/traceability.py, and it covers the spec."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from document import DocumentNotFound, load_document
from validator.spec import load_spec

REPO_ROOT = Path(__file__).resolve().parent.parent
MATRIX = REPO_ROOT / "docs" / "traceability.md"
TOOL = REPO_ROOT / "tools" / "traceability.py"
COMMAND = "python tools/traceability.py --output docs/traceability.md"


def _tool():
    spec = importlib.util.spec_from_file_location("obvalidate_traceability_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


tool = _tool()


@pytest.fixture(scope="module")
def rendered() -> str:
    try:
        return tool.build()
    except DocumentNotFound as exc:
        message = str(exc)
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="module")
def committed() -> str:
    if not MATRIX.is_file():
        pytest.fail(f"docs/traceability.md is missing; run `{COMMAND}`", pytrace=False)
    return MATRIX.read_text(encoding="utf-8")


def test_committed_matrix_is_current(rendered: str, committed: str) -> None:
    if committed != rendered:
        old, new = committed.splitlines(), rendered.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        pytest.fail(
            f"docs/traceability.md is stale (first difference at line {first + 1}); "
            f"regenerate it with `{COMMAND}`",
            pytrace=False,
        )


def test_rendering_is_deterministic(rendered: str) -> None:
    assert tool.build() == rendered


def test_every_operation_appears(rendered: str) -> None:
    missing = []
    for op in load_spec().operations.values():
        ptr = tool.pointer(("paths", op.path, op.method.lower()))
        if f"`{ptr}` ({op.operation_id})" not in rendered:
            missing.append(op.operation_id)
    assert not missing, f"operations absent from the matrix: {missing}"


def test_sections_in_document_order_and_assumptions_listed(rendered: str) -> None:
    doc = load_document()
    rows = [line for line in rendered.splitlines() if line.startswith("| ")]
    section_rows = [r.split(" | ")[0][2:] for r in rows if not r.startswith(("| Document section", "| Id "))]
    sections = [s for s in section_rows if not s.startswith("A") or not s[1:].isdigit()]
    assert sections == [p.replace("|", "\\|") for p in doc.paths]
    ids = [s for s in section_rows if s.startswith("A") and s[1:].isdigit()]
    # the shared tables' A1-A32, then the project's own later decisions (issue 17), as the spec declares them
    assert ids[:32] == [f"A{i}" for i in range(1, 33)] and ids == list(load_spec().assumptions)
    assert "## Decisions the spec does not declare" not in rendered


def test_decisions_come_from_both_files(rendered: str) -> None:
    sources = tool.decision_sources()
    assert [sources[f"A{i}"] for i in (1, 22, 23, 32)] == ["decisions.md", "decisions.md", "decisions-lifecycle.md", "decisions-lifecycle.md"]
    assert list(sources) == [f"A{i}" for i in range(1, 33)]
    assert "| A23 | `decisions-lifecycle.md` |" in rendered and "| A1 | `decisions.md` |" in rendered


def test_a_decision_missing_from_the_spec_is_listed_apart() -> None:
    spec, doc = load_spec(), load_document()
    sources = dict(tool.decision_sources(), A99="decisions-future.md")
    text = tool.render(tool.collect(spec, doc, sources))
    assert "## Decisions the spec does not declare" in text and "| A99 | `decisions-future.md` |" in text


def test_every_document_ref_location_is_under_its_section() -> None:
    spec, doc = load_spec(), load_document()
    matrix = tool.collect(spec, doc)
    assert not matrix.unresolved, [loc.pointer for loc in matrix.unresolved]
    placed = {loc.pointer: section for section, locs in matrix.by_section.items() for loc in locs}
    expected = {}
    for tokens, node in tool._walk(spec.document):
        if isinstance(node, dict) and "x-document-ref" in node and tokens[:1] != ("x-assumptions",):
            expected[tool.pointer(tokens)] = node["x-document-ref"]
    assert placed == expected
    create_basket = tool.pointer(("paths", "/v1/signing-baskets", "post"))
    assert create_basket == "#/paths/~1v1~1signing-baskets/post"
    assert placed[create_basket] == "Endpoints › 1. Create signing basket"
    assert "A1" in next(loc for loc in matrix.by_assumption["A1"] if loc.pointer == create_basket).assumptions


def test_no_absolute_path_in_the_matrix(rendered: str) -> None:
    assert str(REPO_ROOT) not in rendered and str(REPO_ROOT.parent) not in rendered


def test_check_flag_reports_a_stale_file(tmp_path: Path, rendered: str) -> None:
    stale = tmp_path / "traceability.md"
    stale.write_text(rendered.replace("| A1 |", "| A1 (edited) |"), encoding="utf-8")
    run = subprocess.run([sys.executable, str(TOOL), "--check", "--output", str(stale)],
                         capture_output=True, text=True, cwd=REPO_ROOT)
    assert run.returncode == 1 and COMMAND in run.stderr
    fresh = tmp_path / "fresh.md"
    run = subprocess.run([sys.executable, str(TOOL), "--output", str(fresh)], capture_output=True, text=True, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    assert fresh.read_text(encoding="utf-8") == rendered
    run = subprocess.run([sys.executable, str(TOOL), "--check", "--output", str(fresh)],
                         capture_output=True, text=True, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
