#!/usr/bin/env python3
"""Render the traceability matrix of spec/openapi.yaml against the interface document.

For every section of the interface document (in document order): the spec locations (JSON pointers)
whose `x-document-ref` names it, and the assumptions (`x-assumption`) marked on those locations.
Then the decisions of both decision files (decisions.md: A1-A22, decisions-lifecycle.md: A23-A32):
the file each comes from, gap, decision and profile as the spec declares them (`x-assumptions`), and
the spec locations that mark them. A decision of the files the spec does not declare, or a declared
one no file holds, is listed apart.

    python tools/traceability.py                                  # print to stdout
    python tools/traceability.py --output docs/traceability.md    # (re)write the committed matrix
    python tools/traceability.py --check [--output docs/traceability.md]   # exit 1 if stale

The spec is read through validator.spec.load_spec (OBVALIDATE_SPEC overrides its path); the document
and the decision files are found as tests/document.py describes (../shared/interface-document.md and
../shared/reference/ beside the repository, or OBVALIDATE_DOCUMENT). The output is deterministic: spec order within a section, document order
across sections.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DECISION_FILES = ("decisions.md", "decisions-lifecycle.md")
DEFAULT_OUTPUT = Path("docs") / "traceability.md"
COMMAND = "python tools/traceability.py --output docs/traceability.md"

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from validator.findings import pointer as json_pointer, walk_json  # noqa: E402
from validator.spec import HTTP_METHODS, Spec, load_spec  # noqa: E402


def _load_document_module():
    """tests/document.py, loaded by file path (tests/ is not a package)."""
    name = "obvalidate_tests_document"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tests" / "document.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


document = _load_document_module()


# ---------------------------------------------------------------- collection


def pointer(tokens: tuple) -> str:
    return "#" + json_pointer(*tokens)


_walk = walk_json


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _assumption_key(aid: str) -> tuple[int, str]:
    m = re.fullmatch(r"A(\d+)", aid)
    return (int(m.group(1)), aid) if m else (10**6, aid)


@dataclass
class Location:
    pointer: str
    label: str  # operationId for operations, else ""
    document_ref: str | None
    assumptions: list[str]

    def render(self) -> str:
        text = f"`{self.pointer}`"
        return f"{text} ({self.label})" if self.label else text


@dataclass
class Matrix:
    sections: list[str]  # document heading paths, in document order
    by_section: dict[str, list[Location]] = field(default_factory=dict)
    unresolved: list[Location] = field(default_factory=list)  # x-document-ref naming no section
    by_assumption: dict[str, list[Location]] = field(default_factory=dict)
    assumptions: dict[str, dict] = field(default_factory=dict)  # the spec's x-assumptions
    decision_files: dict[str, str] = field(default_factory=dict)  # decision id -> the file holding it
    release: str = ""


def decision_sources(names: tuple[str, ...] = DECISION_FILES) -> dict[str, str]:
    """Decision id -> name of the decision file whose table holds it, in file and table order."""
    sources: dict[str, str] = {}
    for name in names:
        path = document.reference_path(name)
        parsed = document.parse_markdown(path.read_text(encoding="utf-8"), path)
        for section in parsed.sections:
            for table in section.tables:
                if table.header[:1] == ["id"]:
                    for record in table.records():
                        sources.setdefault(record["id"], name)
    return sources


def collect(spec: Spec, doc, decision_files: dict[str, str] | None = None) -> Matrix:
    matrix = Matrix(sections=list(doc.paths), release=str(spec.info.get("version", "")))
    matrix.decision_files = dict(decision_files or {})
    matrix.by_section = {s: [] for s in matrix.sections}
    matrix.assumptions = {a: dict(spec.assumptions[a]) for a in sorted(spec.assumptions, key=_assumption_key)}
    for tokens, node in _walk(spec.document):
        if not isinstance(node, dict):
            continue
        if tokens[:1] == ("x-assumptions",):  # the declarations themselves, not marks
            continue
        ref = node.get("x-document-ref")
        marks = _as_list(node.get("x-assumption"))
        if ref is None and not marks:
            continue
        label = ""
        if len(tokens) == 3 and tokens[0] == "paths" and tokens[2] in HTTP_METHODS:
            label = str(node.get("operationId", ""))
        loc = Location(pointer(tokens), label, ref, sorted(set(marks), key=_assumption_key))
        if ref is not None:
            (matrix.by_section[ref] if ref in matrix.by_section else matrix.unresolved).append(loc)
        for aid in loc.assumptions:
            matrix.by_assumption.setdefault(aid, []).append(loc)
    return matrix


# ---------------------------------------------------------------- rendering


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _locations(locs: list[Location]) -> str:
    return "<br>".join(loc.render() for loc in locs) if locs else "—"


def render(matrix: Matrix) -> str:
    covered = sum(1 for s in matrix.sections if matrix.by_section[s])
    refs = sum(len(v) for v in matrix.by_section.values())
    out = [
        "# Traceability matrix",
        "",
        "Generated from `spec/openapi.yaml` and the interface document (`interface-document.md`) by",
        f"`{COMMAND}`. Do not edit by hand: `tests/test_traceability.py` fails when this file is stale.",
        "",
        f"Spec release {matrix.release}. {len(matrix.sections)} document sections, {covered} of them referenced by "
        f"{refs} spec locations (`x-document-ref`); {len(matrix.assumptions)} assumptions (`x-assumption`) "
        f"of {len(matrix.decision_files)} decisions in {', '.join(f'`{n}`' for n in dict.fromkeys(matrix.decision_files.values()))}.",
        "",
        "## Document sections → spec",
        "",
        "| Document section | Spec locations | Assumptions |",
        "|---|---|---|",
    ]
    for section in matrix.sections:
        locs = matrix.by_section[section]
        involved = sorted({a for loc in locs for a in loc.assumptions}, key=_assumption_key)
        out.append(f"| {_cell(section)} | {_locations(locs)} | {', '.join(involved) or '—'} |")
    if matrix.unresolved:
        out += ["", "## References to no document section", "",
                "| x-document-ref | Spec location |", "|---|---|"]
        for loc in matrix.unresolved:
            out.append(f"| {_cell(loc.document_ref or '')} | {loc.render()} |")
    out += [
        "",
        "## Assumptions → spec",
        "",
        "| Id | File | Gap | Decision | Profile | Spec locations |",
        "|---|---|---|---|---|---|",
    ]
    for aid, a in matrix.assumptions.items():
        profile = f"yes (`{a['profile-key']}`)" if a.get("profile") and a.get("profile-key") else (
            "yes" if a.get("profile") else "no")
        source = f"`{matrix.decision_files[aid]}`" if aid in matrix.decision_files else "—"
        out.append(f"| {aid} | {source} | {_cell(a.get('gap', ''))} | {_cell(a.get('decision', ''))} | {profile} | "
                   f"{_locations(matrix.by_assumption.get(aid, []))} |")
    undeclared_decisions = [aid for aid in matrix.decision_files if aid not in matrix.assumptions]
    if undeclared_decisions:
        out += ["", "## Decisions the spec does not declare", "", "| Id | File |", "|---|---|"]
        for aid in undeclared_decisions:
            out.append(f"| {aid} | `{matrix.decision_files[aid]}` |")
    undeclared = sorted(set(matrix.by_assumption) - set(matrix.assumptions), key=_assumption_key)
    if undeclared:
        out += ["", "## Marks naming no declared assumption", "", "| x-assumption | Spec locations |", "|---|---|"]
        for aid in undeclared:
            out.append(f"| {_cell(aid)} | {_locations(matrix.by_assumption[aid])} |")
    return "\n".join(out) + "\n"


def build(spec_path: str | None = None, document_path: str | None = None) -> str:
    return render(collect(load_spec(spec_path), document.load_document(document_path), decision_sources()))


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, help="write the matrix to this file instead of stdout")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 if the file (default {DEFAULT_OUTPUT}) differs from a fresh rendering")
    args = parser.parse_args(argv)
    try:
        text = build()
    except document.DocumentNotFound as exc:
        print(f"traceability: {exc}", file=sys.stderr)
        return 2
    if args.check:
        target = args.output or (REPO_ROOT / DEFAULT_OUTPUT)
        try:
            current = target.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != text:
            state = "missing" if current is None else "stale"
            print(f"traceability: {target} is {state}; run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
