"""Every answer of the target checked against the spec and the validator's response kinds.

The status must be one the spec declares for the operation, the content type JSON where the spec declares a body,
and the body must pass the validator's response kind for (operation, status) -- one of them where the spec allows
several (``anyOf``).
"""
from __future__ import annotations

from dataclasses import dataclass

from validator import Validator
from validator.findings import ERROR
from validator.request import resolve_operation
from validator.spec import Spec

JSON = "application/json"


@dataclass(frozen=True)
class ResponseProblem:
    rule: str          # "status-undeclared", "content-type", or the validator rule the body breaks
    ref: str
    message: str


class ResponseKinds:
    def __init__(self, spec: Spec, validator: Validator) -> None:
        self.spec = spec
        self.validator = validator
        self.kinds = {k.schema_name: k.name for k in spec.kinds.values() if not k.is_request}

    def problems(self, method: str, path: str, status: int, content_type: str, body: bytes) -> list[ResponseProblem]:
        op = resolve_operation(self.spec, method, path).operation
        if op is None:
            return []  # no operation: what the answer must be is the request check's business (404, 405)
        declared = op.responses.get(str(status))
        if declared is None:
            known = ", ".join(sorted(op.responses))
            return [ResponseProblem("status-undeclared", "Endpoints",
                                    f"status {status} is not declared for {op.operation_id} (declared: {known})")]
        media = declared.get("content", {}).get(JSON)
        if media is None:
            if body:
                return [ResponseProblem("body-undeclared", "Endpoints",
                                        f"{op.operation_id} {status} has a body where the spec declares none")]
            return []
        if not content_type.startswith(JSON):
            return [ResponseProblem("content-type", "Endpoints",
                                    f"{op.operation_id} {status}: Content-Type {content_type!r}, not {JSON}")]
        schema = media.get("schema", {})
        refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", ())]
        kinds = [self.kinds[r.rsplit("/", 1)[1]] for r in refs if r and r.rsplit("/", 1)[1] in self.kinds]
        if not kinds:
            return []
        reports = [self.validator.validate_bytes(body, kind) for kind in kinds]
        if any(r.valid for r in reports):
            return []
        best = min(reports, key=lambda r: len(r.errors))
        return [ResponseProblem(f.rule, f.ref or "", f"{op.operation_id} {status} as {best.kind}: {f.pointer or '/'} "
                                f"{f.message}") for f in best.findings if f.severity == ERROR][:3]
