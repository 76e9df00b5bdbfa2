"""Every answer of the target checked against the spec and the validator's response kinds.

The status must be one the spec declares for the operation, the content type JSON where the spec declares a body,
and the body must pass the validator's response kind for (operation, status) -- one of them where the spec allows
several (``anyOf``).
"""
from __future__ import annotations

from dataclasses import dataclass

from validator import Validator
from validator.context import DEFAULT_PROFILE, Profile
from validator.findings import ERROR
from validator.request import resolve_operation
from validator.spec import Spec

JSON = "application/json"
# A6: the two documented error bodies, by schema: tppMessages, and the bulk operation's {id, system, status, code,
# message}; and the ones each error-body choice of a profile accepts on a refusal.
TPP_MESSAGES, BULK_ERROR = "TppMessagesError", "ErrorBody"
ERROR_BODIES = {"either": (TPP_MESSAGES, BULK_ERROR), "tpp-messages": (TPP_MESSAGES,), "bulk": (BULK_ERROR,)}
# The bulk body's status-code pairs are the bulk operation's Errors table: the body borrowed by another operation
# answers that operation's statuses and codes (which the prediction judges), so the pairing is not held against it.
BULK_TABLE_RULES = frozenset({"error-status-code"})
ERROR_BODY_RULE = "error-body"  # the gate's rule of an answer breaking A6: one finding group per run
ERROR_BODY_WORDS = {TPP_MESSAGES: '{"tppMessages": [...]}', BULK_ERROR: "{id, system, status, code, message}"}


@dataclass(frozen=True)
class ResponseProblem:
    rule: str          # "status-undeclared", "content-type", or the validator rule the body breaks
    ref: str
    message: str


class ResponseKinds:
    def __init__(self, spec: Spec, validator: Validator, profile: Profile = DEFAULT_PROFILE) -> None:
        self.spec = spec
        self.validator = validator
        self.profile = profile
        self.kinds = {k.schema_name: k.name for k in spec.kinds.values() if not k.is_request}

    def error_bodies(self, declared: list[str]) -> list[str]:
        """The error body schemas a refusal may carry where the spec declares ``declared`` (A6, the profile's
        error-body): either documented body by default, the one a profile pins, or the operation's own."""
        chosen = ERROR_BODIES.get(self.profile.error_body)
        return [n for n in declared if n in (TPP_MESSAGES, BULK_ERROR)] if chosen is None else list(chosen)

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
        names = [r.rsplit("/", 1)[1] for r in refs if r]
        errors = declared_errors = [n for n in names if n in (TPP_MESSAGES, BULK_ERROR)]
        if errors:
            names = [n for n in names if n not in errors] + self.error_bodies(errors)
        names = [n for n in names if n in self.kinds]
        if not names:
            return []
        reports = [self.validator.validate_bytes(body, self.kinds[n]) for n in names]
        for name, report in zip(names, reports):
            borrowed = name not in declared_errors and name in (TPP_MESSAGES, BULK_ERROR)
            if not [f for f in report.errors if not (borrowed and f.rule in BULK_TABLE_RULES)]:
                return []
        best = min(reports, key=lambda r: len(r.errors))
        if errors:
            as_error = [r for n, r in zip(names, reports) if n in (TPP_MESSAGES, BULK_ERROR)]
            closest = min(as_error or reports, key=lambda r: len(r.errors))
            why = next((f"{f.pointer or '/'} {f.message}" for f in closest.errors), "")
            wanted = " or ".join(ERROR_BODY_WORDS[n] for n in self.error_bodies(errors))
            return [ResponseProblem(ERROR_BODY_RULE, "A6", f"{op.operation_id} {status}: the body is not {wanted}"
                                    f"{' (' + why + ')' if why else ''}")]
        return [ResponseProblem(f.rule, f.ref or "", f"{op.operation_id} {status} as {best.kind}: {f.pointer or '/'} "
                                f"{f.message}") for f in best.findings if f.severity == ERROR][:3]
