#!/usr/bin/env python3
"""How often kind detection finds the kind a person meant, on payloads one mistake away from an example.

For every payload kind, every example of it in spec/openapi.yaml is changed in every way one top-level
mistake can change it (for array kinds: a property of the first element): each property dropped in
turn, and each property name misspelt (one letter left out; two neighbouring letters swapped). Each
changed payload is then detected without --kind. Outcomes:

    right             the kind meant (also when detection warns that it is a guess)
    warned            another kind, but a kind-ambiguous warning names the kind meant and suggests --kind
    undetected        no kind: a kind-undetected error asks for --kind (`{}` left when the only property is dropped)
    indistinguishable another kind that the changed payload fits exactly and validly (dropping
                      transactionStatus from a payment detail leaves a complete SEPA credit transfer):
                      no detector could know
    wrong             another kind, silently: a defect

    python tools/detection_accuracy.py            # summary, then every case not "right"
    python tools/detection_accuracy.py --json     # every case

Exit 1 when any case is wrong.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from validator.detect import detect_kind  # noqa: E402
from validator.schema import checker_for  # noqa: E402
from validator.spec import Spec, load_spec  # noqa: E402

SCHEMA_PREFIX = "#/components/schemas/"


@dataclass(frozen=True)
class Case:
    kind: str
    example: str
    change: str
    detected: str | None
    candidates: tuple[str, ...]
    confident: bool
    outcome: str


def kind_examples(spec: Spec) -> Iterator[tuple[str, str, Any]]:
    """(kind, example location, value) for every spec example whose schema is one kind."""
    by_schema = {k.schema_name: k.name for k in spec.kinds.values()}
    for location, schema, value in spec.iter_examples():
        refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", [])]
        kinds = [by_schema.get(r[len(SCHEMA_PREFIX):]) for r in refs if r]
        kinds = [k for k in kinds if k]
        if len(kinds) == 1:
            yield kinds[0], location, value
        else:  # an anyOf response example: the kind whose schema it satisfies
            fitting = [k for k in kinds if checker_for(spec, spec.kinds[k].schema_name).is_valid(value)]
            if len(fitting) == 1:
                yield fitting[0], location, value


def misspellings(name: str) -> list[tuple[str, str]]:
    """(label, misspelt name): one letter left out, two neighbouring letters swapped (near the middle)."""
    middle = len(name) // 2
    out = []
    if len(name) > 1:
        out.append(("left out", name[:middle] + name[middle + 1:]))
    if len(name) > 2:
        swapped = name[:middle - 1] + name[middle] + name[middle - 1] + name[middle + 1:]
        if swapped != name:
            out.append(("swapped", swapped))
    return out


def mutants(value: Any) -> Iterator[tuple[str, Any]]:
    """(description, changed payload) for every one-mistake change of the top level."""
    target_path: tuple = ()
    target = value
    if isinstance(value, list):
        index = next((i for i, v in enumerate(value) if isinstance(v, dict)), None)
        if index is None:
            return
        target_path, target = (index,), value[index]
    if not isinstance(target, dict):
        return
    for key in target:
        dropped = copy.deepcopy(value)
        _at(dropped, target_path).pop(key)
        yield f"{key} dropped", dropped
        for label, wrong in misspellings(key):
            if wrong in target:
                continue
            renamed = copy.deepcopy(value)
            obj = _at(renamed, target_path)
            obj_items = list(obj.items())
            obj.clear()
            obj.update((wrong if k == key else k, v) for k, v in obj_items)
            yield f"{key} misspelt {wrong} ({label})", renamed


def _at(value: Any, path: tuple) -> Any:
    for token in path:
        value = value[token]
    return value


def fits_exactly(spec: Spec, kind: str, payload: Any) -> bool:
    """The payload satisfies the kind's schema and declares only its properties (so could be meant as it)."""
    from validator.detect import kind_shapes

    entry = next(e for e in kind_shapes(spec) if e.kind.name == kind)
    if not checker_for(spec, entry.kind.schema_name).is_valid(payload):
        return False
    top = payload[0] if entry.array and payload and isinstance(payload[0], dict) else payload
    keys = set(top) if isinstance(top, dict) else set()
    return any(keys <= s.properties for s in entry.shapes)


def classify(spec: Spec, kind: str, payload: Any) -> tuple[str, Any]:
    detection = detect_kind(spec, payload)
    if detection.kind == kind or (not detection.confident and kind in detection.candidates):
        outcome = "right" if detection.kind == kind else "warned"
    elif detection.kind is None:
        outcome = "undetected"  # an error finding asks for --kind
    elif fits_exactly(spec, detection.kind, payload) and not fits_exactly(spec, kind, payload):
        outcome = "indistinguishable"
    else:
        outcome = "wrong"
    return outcome, detection


def run(spec: Spec | None = None) -> list[Case]:
    spec = spec or load_spec()
    cases = []
    seen: set[str] = set()
    for kind, location, value in kind_examples(spec):
        key = json.dumps([kind, value], sort_keys=True)
        if key in seen:  # a shared response example counts once
            continue
        seen.add(key)
        for change, payload in [("unchanged", value), *mutants(value)]:
            outcome, d = classify(spec, kind, payload)
            cases.append(Case(kind, location, change, d.kind, d.candidates, d.confident, outcome))
    return cases


def summary(cases: list[Case]) -> dict:
    counts = Counter(c.outcome for c in cases)
    total = len(cases)
    return {
        "cases": total,
        "kinds": len({c.kind for c in cases}),
        "examples": len({c.example for c in cases}),
        **{k: counts.get(k, 0) for k in ("right", "warned", "undetected", "indistinguishable", "wrong")},
        "accuracy": counts["right"] / total if total else 1.0,
        "explicit": (total - counts["wrong"]) / total if total else 1.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print every case as JSON")
    args = parser.parse_args(argv)
    cases = run()
    totals = summary(cases)
    if args.json:
        print(json.dumps({"summary": totals, "cases": [asdict(c) for c in cases]}, indent=2))
    else:
        print(
            f"{totals['cases']} payloads ({totals['kinds']} kinds, {totals['examples']} spec examples, each unchanged, "
            f"with each top-level property dropped, and misspelt two ways): "
            f"{totals['right']} right ({totals['accuracy']:.1%}), {totals['warned']} another kind with a warning naming "
            f"the right one, {totals['undetected']} undetected (an error asks for --kind), "
            f"{totals['indistinguishable']} indistinguishable, {totals['wrong']} wrong"
        )
        for c in cases:
            if c.outcome != "right":
                print(f"  {c.outcome:<17} {c.kind} ({c.example}), {c.change}: detected {c.detected} {list(c.candidates)}")
    return 1 if totals["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
