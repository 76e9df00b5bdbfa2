"""What `obvalidate payload.json` imports on its way: click, jsonschema_rs, the standard library modules the check
needs and obvalidate's own modules of a payload check, nothing else. The cold start is at its floor (README
"Performance": the whole command 3.06-3.18x a bare `python -c "import json"`, importing click and jsonschema_rs
alone 2.76x); a new import on that path is what would move it, so this test fails on one, naming the module and
what imported it. Deterministic: it compares sets of modules, never times.

The command runs in a fresh interpreter without `site` (no .pth file of the installation adds modules first), its
imports recorded by a finder placed ahead of the others. Checked: every module of obvalidate's own, every module
obvalidate's code imports, every third-party package anywhere. Not checked: what the standard library and the
allowed libraries import for themselves, which depends on their versions and Python's, not on this code.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from validator.rules.examples import spec_example
from validator.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
OWN_PACKAGES = {"validator", "conformance"}

# obvalidate's own modules a payload check needs, by what they do for it.
OWN_START = {
    "the command and its settings": {"validator", "validator.cli", "validator.context", "validator.gcpause"},
    "reading the input": {"validator.jsonload", "validator.records", "validator.cache"},
    "the spec, kinds and the compiled visit of the rules": {
        "validator.spec", "validator.api", "validator.engine", "validator.detect", "validator.suggest",
        "validator.locate", "validator.schema", "validator.request", "validator.request.shape",
        "validator.compiled"},
    "the rules of a payload (loaded together: the catalogue is one)": {
        "validator.rules", "validator.rules.load_all", "validator.rules.accounts", "validator.rules.amounts",
        "validator.rules.baskets", "validator.rules.dates", "validator.rules.engine_rules", "validator.rules.errors",
        "validator.rules.periodic", "validator.rules.properties", "validator.rules.remittance",
        "validator.rules.request_rules", "validator.rules.status", "validator.checks", "validator.checks.accounts",
        "validator.checks.kid", "validator.signing", "validator.signing.rules"},
    "the report": {"validator.findings", "validator.formats", "validator.formats.text", "validator.formats.escape"},
}
# Only when the input has findings: their line and column in the text.
OWN_FINDINGS = {"validator.positions"}

# Standard library modules obvalidate's code imports on the start path (top-level names), by what they are for.
STDLIB_DIRECT = {
    "the language and the interpreter": {"__future__", "typing", "collections", "functools", "itertools", "sys", "gc",
                                         "threading", "time", "io", "importlib", "marshal", "binascii", "bisect"},
    "records of findings and rules": {"dataclasses"},
    "decoding and the text's checks": {"json", "re", "codecs", "encodings"},
    "files, caches and the spec's location": {"os", "stat", "pathlib"},
    "dates": {"datetime", "calendar"},
    "formats (ipv4, ipv6, uri)": {"ipaddress", "urllib"},
    "the terminal's language and width": {"locale"},
}
# Only without --today: today's date in Europe/Oslo (with --today no zone is loaded).
STDLIB_TODAY = {"zoneinfo"}
# Third-party packages (top-level names), anywhere on the path.
THIRD_PARTY = {
    "click": "the command line",
    "jsonschema_rs": "the compiled schema engine (python-jsonschema is imported only to word an anyOf's closest branch)",
}
THIRD_PARTY_TODAY = {"tzdata": "Europe/Oslo where the operating system has no zone database (zoneinfo loads it)"}

_CHILD = r"""
import atexit
import sys

_baseline = set(sys.modules)
_importers = {}
_MACHINERY = ("<frozen importlib._bootstrap", "<frozen zipimport")


class _Recorder:
    # First in sys.meta_path: asked before any other finder about each module not yet imported; finds nothing.
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in _importers:
            frame = sys._getframe(1)
            while frame is not None and (frame.f_code.co_filename.startswith(_MACHINERY) or (
                    frame.f_globals.get("__name__") == "importlib" and frame.f_code.co_name == "import_module")):
                frame = frame.f_back
            _importers[name] = frame.f_globals.get("__name__", "?") if frame is not None else "?"
        return None


def _report():
    with open(_OUT, "w", encoding="utf-8") as fh:
        for name in sorted(set(sys.modules) - _baseline):
            fh.write(f"{name} {_importers.get(name, '?')}\n")


_OUT = sys.argv.pop(1)
sys.meta_path.insert(0, _Recorder)
atexit.register(_report)
from validator.cli import main
main()
"""


def start_imports(tmp_path: Path, payload: dict, today: bool = True) -> dict[str, str]:
    """module -> the module that imported it, for every module `obvalidate payload.json` imports (``today``: with
    --today, as the cold-start benchmark runs it)."""
    spec = load_spec()
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(payload))
    out = tmp_path / "modules.txt"
    paths = sysconfig.get_paths()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(ROOT), paths["purelib"], paths["platlib"]]))}
    options = ["--today", spec.example_today] if today else []
    run = subprocess.run([sys.executable, "-S", "-c", _CHILD, str(out), *options, str(path)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert run.returncode in (0, 1), run.stderr  # 1: the payload has errors
    loaded = dict(line.split(" ", 1) for line in out.read_text(encoding="utf-8").splitlines())
    # A module put in sys.modules by its package's own code (os.path, typing.io) was imported by that package.
    return {name: (name.rpartition(".")[0] or "?") if importer == "?" else importer for name, importer in loaded.items()}


def _ours(module: str) -> bool:
    return module.split(".")[0] in OWN_PACKAGES or module == "__main__"


def unexpected_imports(loaded: dict[str, str], own_allowed: set[str], today: bool = True) -> list[str]:
    """A line per module not allowed on the start path: the module, what imported it, and the chain up to the
    command (``today``: --today given; without it, the zone of Europe/Oslo is loaded too)."""
    stdlib_allowed = set().union(*STDLIB_DIRECT.values(), () if today else STDLIB_TODAY)
    third_party = THIRD_PARTY if today else {**THIRD_PARTY, **THIRD_PARTY_TODAY}
    problems = []
    for name, importer in sorted(loaded.items()):
        top = name.split(".")[0]
        if top in OWN_PACKAGES:
            allowed = name in own_allowed
        elif top in sys.stdlib_module_names or top.startswith("_sysconfigdata_"):
            allowed = not _ours(importer) or top in stdlib_allowed
        else:
            allowed = top in third_party
        if not allowed:
            chain, seen = [importer], {name}
            while chain[-1] in loaded and chain[-1] not in seen:
                seen.add(chain[-1])
                chain.append(loaded[chain[-1]])
            problems.append(f"{name}, imported by {importer} (import chain: {' <- '.join([name, *chain])})")
    return problems


def _explain(problems: list[str]) -> str:
    return ("new modules on the start path of `obvalidate payload.json` (each costs every start; import it where it "
            "is needed, or add it to the allow-list of tests/validator/test_start_imports.py with the reason):\n  "
            + "\n  ".join(problems))


OWN_ALLOWED = set().union(*OWN_START.values())


def test_a_valid_payload_imports_only_what_its_check_needs(tmp_path) -> None:
    loaded = start_imports(tmp_path, spec_example(load_spec(), "createSepaCreditTransfer request rentToBerlin"))
    assert "validator.cli" in loaded and "jsonschema_rs" in loaded  # the recording saw the start
    problems = unexpected_imports(loaded, OWN_ALLOWED)
    assert not problems, _explain(problems)


def test_a_payload_with_findings_adds_only_their_positions(tmp_path) -> None:
    payment = spec_example(load_spec(), "createSepaCreditTransfer request rentToBerlin")
    payment["creditorName"] = "N" * 80  # schema-length
    payment["instructedAmount"]["amount"] = "1.234"  # amount-minor-units
    loaded = start_imports(tmp_path, payment)
    assert "validator.positions" in loaded
    problems = unexpected_imports(loaded, OWN_ALLOWED | OWN_FINDINGS)
    assert not problems, _explain(problems)


def test_without_today_only_the_zone_of_europe_oslo_is_added(tmp_path) -> None:
    loaded = start_imports(tmp_path, spec_example(load_spec(), "createSepaCreditTransfer request rentToBerlin"),
                           today=False)
    assert "zoneinfo" in loaded
    # the example's dates may be past the real today: findings, placed in the text
    problems = unexpected_imports(loaded, OWN_ALLOWED | OWN_FINDINGS, today=False)
    assert not problems, _explain(problems)


@pytest.mark.parametrize("new, importer, named", [
    ("asyncio", "validator.engine", "asyncio, imported by validator.engine"),  # the standard library, by our code
    ("zoneinfo", "validator.context", "zoneinfo, imported by validator.context"),  # with --today: no zone
    ("cryptography", "validator.signing.rules", "cryptography, imported by validator.signing.rules"),  # a third party
    ("yaml", "jsonschema_rs", "yaml, imported by jsonschema_rs"),  # a third party, by an allowed library
    ("validator.positions", "validator.engine", "validator.positions, imported by validator.engine"),  # ours
])
def test_a_new_import_is_named_with_what_imported_it(new, importer, named) -> None:
    loaded = {"validator.cli": "__main__", "validator.engine": "validator.api", "validator.api": "validator.cli",
              "validator.signing.rules": "validator.rules.request_rules", "jsonschema_rs": "validator.schema",
              new: importer}
    problems = unexpected_imports(loaded, OWN_ALLOWED)
    assert len(problems) == 1 and problems[0].startswith(named), problems
    if importer == "validator.engine":
        assert problems[0].endswith("<- validator.engine <- validator.api <- validator.cli <- __main__)")
    assert f"(import chain: {new} <- {importer}" in problems[0]
    # what the standard library imports for itself is its own business
    assert not unexpected_imports({"validator.cli": "__main__", "inspect": "click.core", "email.utils": "jsonschema_rs"},
                                  OWN_ALLOWED)
