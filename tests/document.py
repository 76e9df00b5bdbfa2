"""A small parser of the interface document's Markdown (the contract's source).

The document is plain Markdown: one ``#`` title, ``##`` parts, ``###`` sub-parts, pipe tables,
bullet and numbered lists, and paragraphs. This module turns it into sections addressed by their
heading path ("H2" or "H2 › H3", the form the spec's ``x-document-ref`` uses), each with its
tables (header row + rows, and the paragraph just before the table as its caption, e.g.
"Bulk entry:"), its list items and its paragraphs.

Where the document lives: ``../shared/interface-document.md`` relative to the repository root
(``Path(repo_root).parent / "shared" / "interface-document.md"``), overridable with the
``OBVALIDATE_DOCUMENT`` environment variable. The shared reference files (``decisions.md``,
``currency-minor-units.csv``) are read from the ``reference`` folder beside the document.

Used by tests/test_spec_contract.py and tools/traceability.py. Nothing here knows the spec.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

DOCUMENT_ENV = "OBVALIDATE_DOCUMENT"
SEP = " › "

REPO_ROOT = Path(__file__).resolve().parent.parent


class DocumentNotFound(FileNotFoundError):
    """The interface document (or a shared reference file) is not where it is expected."""


# ---------------------------------------------------------------- locations


def document_path() -> Path:
    env = os.environ.get(DOCUMENT_ENV)
    if env:
        return Path(env)
    return REPO_ROOT.parent / "shared" / "interface-document.md"


def shared_dir() -> Path:
    """The folder holding the interface document (``shared/`` beside the repository in CI)."""
    return document_path().parent


def reference_path(name: str) -> Path:
    """A file of ``shared/reference`` (decisions.md, currency-minor-units.csv, ...)."""
    path = shared_dir() / "reference" / name
    if not path.is_file():
        raise DocumentNotFound(
            f"shared reference file {name!r} not found at {path}. It is expected in the 'reference' folder "
            f"beside the interface document ({_how_to_locate()})."
        )
    return path


def _how_to_locate() -> str:
    return (
        "the document is read from ../shared/interface-document.md relative to the repository root, "
        f"or from the path in the {DOCUMENT_ENV} environment variable"
    )


# ---------------------------------------------------------------- model


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    caption: str | None  # the paragraph right before the table, e.g. "Bulk entry:"
    line: int  # 1-based line of the header row

    def column(self, name: str) -> int:
        try:
            return self.header.index(name)
        except ValueError:
            raise KeyError(f"table at line {self.line} has no column {name!r} (columns: {self.header})") from None

    def records(self) -> list[dict[str, str]]:
        """Rows as {header: cell} dictionaries."""
        return [dict(zip(self.header, row)) for row in self.rows]

    def first_column(self) -> list[str]:
        return [row[0] for row in self.rows]


@dataclass
class Section:
    level: int  # 1 (title), 2 or 3
    title: str
    path: str  # "H2" or "H2 › H3"; the title's path is the title itself
    line: int
    blocks: list[tuple[str, object]] = field(default_factory=list)  # ("para"|"item"|"table", value) in order

    @property
    def tables(self) -> list[Table]:
        return [b for kind, b in self.blocks if kind == "table"]  # type: ignore[misc]

    @property
    def paragraphs(self) -> list[str]:
        return [b for kind, b in self.blocks if kind == "para"]  # type: ignore[misc]

    @property
    def items(self) -> list[str]:
        """Bullet and numbered list items, without their marker."""
        return [b for kind, b in self.blocks if kind == "item"]  # type: ignore[misc]

    @property
    def text(self) -> str:
        parts = []
        for kind, b in self.blocks:
            if kind == "table":
                parts.extend(" | ".join(r) for r in [b.header, *b.rows])  # type: ignore[union-attr]
            else:
                parts.append(str(b))
        return "\n".join(parts)

    def table(self, caption: str | None = None) -> Table:
        """The section's table with this caption (None: the only table, or the first one without a caption)."""
        tables = self.tables
        if caption is None:
            uncaptioned = [t for t in tables if not (t.caption or "").endswith(":")]
            if uncaptioned:
                return uncaptioned[0]
        else:
            for t in tables:
                if t.caption and t.caption.rstrip(":").strip() == caption.rstrip(":").strip():
                    return t
        raise KeyError(f"no table {caption!r} in section {self.path!r} (captions: {[t.caption for t in tables]})")

    def items_after(self, marker: str) -> list[str]:
        """The list items that follow the paragraph starting with ``marker`` (up to the next paragraph)."""
        found = False
        out: list[str] = []
        for kind, b in self.blocks:
            if kind == "para":
                if found:
                    break
                found = str(b).startswith(marker)
            elif kind == "item" and found:
                out.append(str(b))
            elif kind == "table" and found:
                break
        if not found:
            raise KeyError(f"no paragraph starting with {marker!r} in section {self.path!r}")
        return out

    def line_starting(self, marker: str) -> str:
        """The first paragraph or list item that starts with ``marker``."""
        for kind, b in self.blocks:
            if kind in ("para", "item") and str(b).startswith(marker):
                return str(b)
        raise KeyError(f"no paragraph or item starting with {marker!r} in section {self.path!r}")


@dataclass
class Document:
    sections: list[Section]
    path: Path

    @property
    def title(self) -> str:
        return self.sections[0].title

    @property
    def paths(self) -> list[str]:
        """Heading paths of the H2 and H3 sections, in document order."""
        return [s.path for s in self.sections if s.level >= 2]

    def has(self, path: str) -> bool:
        return path in self.paths

    def section(self, path: str) -> Section:
        for s in self.sections:
            if s.path == path and s.level >= 2:
                return s
        raise KeyError(f"no section {path!r} in the interface document")

    def subsections(self, path: str) -> list[Section]:
        return [s for s in self.sections if s.level == 3 and s.path.startswith(path + SEP)]


# ---------------------------------------------------------------- parsing

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+(.*)$")
_SEPARATOR_CELL = re.compile(r"^:?-{1,}:?$")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return [c.strip().replace("\\|", "|") for c in cells]


def parse_markdown(text: str, path: Path | None = None) -> Document:
    sections: list[Section] = []
    h2: str | None = None
    current: Section | None = None
    para: list[str] = []
    table_lines: list[tuple[int, str]] = []
    last_para: str | None = None

    def flush_para() -> None:
        nonlocal para, last_para
        if para and current is not None:
            joined = " ".join(p.strip() for p in para)
            current.blocks.append(("para", joined))
            last_para = joined
        para = []

    def flush_table() -> None:
        nonlocal table_lines, last_para
        if not table_lines:
            return
        if current is None:
            raise ValueError("a table before the first heading")
        first_line, header_line = table_lines[0]
        header = _cells(header_line)
        rest = table_lines[1:]
        if rest and all(_SEPARATOR_CELL.match(c) for c in _cells(rest[0][1]) if c):
            rest = rest[1:]
        rows = []
        for lineno, raw in rest:
            cells = _cells(raw)
            if len(cells) != len(header):
                raise ValueError(f"line {lineno}: table row has {len(cells)} cells, header has {len(header)}")
            rows.append(cells)
        current.blocks.append(("table", Table(header, rows, last_para, first_line)))
        table_lines = []
        last_para = None

    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("|"):
            flush_para()
            table_lines.append((lineno, line))
            continue
        flush_table()
        heading = _HEADING.match(line)
        if heading:
            flush_para()
            level, title = len(heading.group(1)), heading.group(2).strip()
            if level == 1:
                path_ = title
            elif level == 2:
                h2 = title
                path_ = title
            else:
                if h2 is None:
                    raise ValueError(f"line {lineno}: sub-heading {title!r} before any part heading")
                path_ = h2 + SEP + title
            current = Section(level, title, path_, lineno)
            sections.append(current)
            last_para = None
            continue
        if not stripped:
            flush_para()
            continue
        item = _ITEM.match(line)
        if item:
            flush_para()
            if current is not None:
                current.blocks.append(("item", item.group(1).strip()))
                last_para = None
            continue
        para.append(stripped)
    flush_para()
    flush_table()
    if not sections:
        raise ValueError("no headings in the interface document")
    return Document(sections, path or Path("<text>"))


def load_document(path: str | os.PathLike | None = None) -> Document:
    """Parse the interface document; a missing file raises DocumentNotFound with a clear message."""
    p = Path(path) if path else document_path()
    if not p.is_file():
        raise DocumentNotFound(f"interface document not found at {p}: {_how_to_locate()}.")
    return parse_markdown(p.read_text(encoding="utf-8"), p)


# ---------------------------------------------------------------- small readers of the document's prose


def split_list(text: str) -> list[str]:
    """"A, B, C or D" / "A or B" / "A, B and C" -> ["A", "B", "C", "D"] (a trailing full stop dropped)."""
    text = text.strip().rstrip(".")
    parts = re.split(r",\s*|\s+or\s+|\s+and\s+", text)
    return [p.strip() for p in parts if p.strip()]


def inline_fields(text: str) -> dict[str, list[str]]:
    """Fields written inline as ``name (spec, spec; spec)``: {name: [spec tokens]}.

    "Link: href (string, R), verbs (array of GET, PUT, POST, DELETE; R)." ->
    {"href": ["string", "R"], "verbs": ["array of GET", "PUT", "POST", "DELETE", "R"]}.
    Only a name that starts a comma-separated item (at parenthesis depth 0) counts, so that
    "each a Link with href and verbs (R)" does not read as a field.
    """
    body = text.split(":", 1)[1] if re.match(r"^[A-Za-z][\w -]*:\s", text) else text
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    fields: dict[str, list[str]] = {}
    for item in items:
        m = re.match(r"^\s*([A-Za-z_][\w.]*) \(([^()]*)\)", item)
        if m:
            fields[m.group(1)] = [t.strip() for t in re.split(r"[,;]", m.group(2)) if t.strip()]
    return fields


def named_fields(text: str) -> dict[str, list[str]]:
    """Every ``name (spec, ...)`` in a sentence, wherever it stands ("Query: a (boolean, O). ... b (date, O)")."""
    return {
        m.group(1): [t.strip() for t in re.split(r"[,;]", m.group(2)) if t.strip()]
        for m in re.finditer(r"\b([A-Za-z_]\w*) \(([^()]*)\)", text)
    }


@dataclass(frozen=True)
class LengthRule:
    min_length: int | None
    max_length: int | None


def length_rule(text: str) -> LengthRule:
    """Length limits stated in a type/rule cell or a Limits value.

    "<= 35" -> max 35; "1 to 140", "length 1 to 35" and "4 to 14" -> min and max; "non-empty" -> min 1;
    "2 characters" -> exactly 2. Nothing stated -> (None, None).
    """
    lo = hi = None
    m = re.search(r"<=\s*(\d+)", text)
    if m:
        hi = int(m.group(1))
    else:
        m = re.search(r"(?:length\s+)?\b(\d+) to (\d+)\b", text)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
        else:
            m = re.search(r"\b(\d+) characters\b", text)
            if m:
                lo = hi = int(m.group(1))
    if re.search(r"\bnon-empty\b", text) and lo is None:
        lo = 1
    return LengthRule(lo, hi)


def backticked(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)
