"""Every answer of the target checked against the spec and the validator's response kinds.

The status must be one the spec declares for the operation, the content type JSON where the spec declares a body,
and the body must pass the validator's response kind for (operation, status) -- one of them where the spec allows
several (``anyOf``). Every ``_links`` href of a JSON answer must lead to an operation of the spec (the path matched
whatever the method, as :func:`validator.request.resolve_operation` matches it) with the answer's own ids: a link
naming another paymentId, basketId or authorisationId than the request's or the answer's own is a finding. The link
the spec names as its SCA page (``x-sca-page.url``) is a page for the PSU's browser, not an operation: exempt. Every
link, the SCA page's too, must stay on the target's origin or one allowed (origins.py): a link elsewhere is
``link-off-target``. The body is read as the exchange decoded it (decoding.py): an answer the gate cannot decode
(nested too deep, too large) is ``answer-not-judged``, saying why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from validator import Validator
from validator.context import DEFAULT_PROFILE, Profile
from validator.findings import ERROR
from validator.request import creation_operation, resolve_operation, resolve_path
from validator.schema import DRAFT, SchemaChecker, bundled_schema
from validator.spec import Spec

from .decoding import NOT_JUDGED, Decoded, decode, not_judged_message
from .origins import OffTarget, Origins

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
# The ids an answer's links must keep: a link to a resource is a link to this one (path parameters of the spec).
OWN_IDS = ("paymentId", "basketId", "authorisationId")
LINK_REF = "Endpoints"
LINK_RULES = ("link-unresolved", "link-foreign-id", OffTarget.rule)
# An answer up to this size has its findings in text order (its text scanned once more for their places, as the
# validator's reports have them); a larger one in pointer order, never decoded twice.
POSITIONED_BYTES = 1024 * 1024
CACHE_BOUND = 4096   # places and link shapes remembered (an answer's own keys make places: bounded)
SERVICE, PRODUCT = "payment-service", "payment-product"
SCHEMA_RULE_PREFIX = "schema-"   # the rules of a schema keyword (validator.schema.KEYWORD_RULES)


@dataclass(frozen=True)
class ResponseProblem:
    rule: str          # "status-undeclared", "content-type", or the validator rule the body breaks
    ref: str
    message: str
    pointer: str = ""  # where in the answer: "/status", "/headers/content-type", "/body/..."


class ResponseKinds:
    def __init__(self, spec: Spec, validator: Validator, profile: Profile = DEFAULT_PROFILE,
                 base_path: str = "", origins: Origins | None = None) -> None:
        self.spec = spec
        self.origins = origins   # None: where a link leads is not judged by origin (a caller without a target)
        self.validator = validator
        self.profile = profile
        self.kinds = {k.schema_name: k.name for k in spec.kinds.values() if not k.is_request}
        self.base_path = base_path.rstrip("/")
        page = re.match(r"_links\.(\w+)\.href", str((spec.document.get("x-sca-page") or {}).get("url", "")))
        self.page_links = {page.group(1)} if page else set()
        # The SCA page's link is the page's decision (A24: on the implementation), an operation's link Endpoints'.
        self.page_ref = str((spec.document.get("x-sca-page") or {}).get("x-assumption") or LINK_REF)
        # schemas are the spec's own (they live as long as it): a place's answer depends on the schema and tokens
        self._outside_cache: dict[tuple[int, tuple[str, ...]], bool] = {}
        self._good_links: set[str] = set()   # link shapes found good (_link_problem), bounded as the cache above
        # The response kinds answers were judged as (at most the spec's): their rules were reached, whether or not
        # an answer broke one (the gate's clause coverage).
        self.judged_kinds: set[str] = set()

    def error_bodies(self, declared: list[str]) -> list[str]:
        """The error body schemas a refusal may carry where the spec declares ``declared`` (A6, the profile's
        error-body): either documented body by default, the one a profile pins, or the operation's own."""
        chosen = ERROR_BODIES.get(self.profile.error_body)
        return [n for n in declared if n in (TPP_MESSAGES, BULK_ERROR)] if chosen is None else list(chosen)

    def problems(self, method: str, path: str, status: int, content_type: str, body: bytes,
                 decoded: Decoded | None = None, *, body_known: bool = True) -> list[ResponseProblem]:
        """What is wrong with an answer of ``method path``; ``decoded``, the body as the exchange decoded it (decoded
        here if not); ``body_known`` False (a body cut short by a cap): the status and content type only."""
        resolution = resolve_operation(self.spec, method, path)
        op = resolution.operation
        if op is None:
            return []  # no operation: what the answer must be is the request check's business (404, 405)
        return self.operation_problems(op, resolution.path_values, path, status, content_type, body, decoded,
                                       body_known=body_known)

    def operation_problems(self, op, path_values: dict[str, str], path: str, status: int, content_type: str,
                           body: bytes, decoded: Decoded | None = None, *,
                           body_known: bool = True) -> list[ResponseProblem]:
        """:meth:`problems` of an answer of the resolved operation ``op``."""
        if not body_known:
            return self._answer_problems(op, status, content_type, body, None)
        decoded = decoded if decoded is not None else decode(body)
        media = self.spec.deref(op.responses.get(str(status)) or {}).get("content", {}).get(JSON) or {}
        answer = self._answer_problems(op, status, content_type, body, decoded, path_values)
        if decoded.why_not:
            return answer   # its links cannot be read either: the one finding says why
        return answer + self.link_problems(path, path_values, body, media.get("schema"), decoded=decoded)

    def _answer_problems(self, op, status: int, content_type: str, body: bytes,
                         decoded: Decoded | None, path_values: dict[str, str] | None = None) -> list[ResponseProblem]:
        """``decoded`` None: the body is not known whole (cut by a cap), only the status and content type judged.
        ``path_values``: the request's path values; a body failing every branch of a schema whose branches are the
        products' (the payment detail, A4) is worded by the branch of the path's payment-service x payment-product."""
        declared = op.responses.get(str(status))
        if declared is None:
            known = ", ".join(sorted(op.responses))
            return [ResponseProblem("status-undeclared", "Endpoints",
                                    f"status {status} is not declared for {op.operation_id} (declared: {known})",
                                    "/status")]
        media = declared.get("content", {}).get(JSON)
        if media is None:
            if body:
                return [ResponseProblem("body-undeclared", "Endpoints",
                                        f"{op.operation_id} {status} has a body where the spec declares none",
                                        "/body")]
            return []
        if not content_type.startswith(JSON):
            return [ResponseProblem("content-type", "Endpoints",
                                    f"{op.operation_id} {status}: Content-Type {content_type!r}, not {JSON}",
                                    "/headers/content-type")]
        if decoded is None:
            return []
        schema = media.get("schema", {})
        refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", ())]
        names = [r.rsplit("/", 1)[1] for r in refs if r]
        errors = declared_errors = [n for n in names if n in (TPP_MESSAGES, BULK_ERROR)]
        if errors:
            names = [n for n in names if n not in errors] + self.error_bodies(errors)
        names = [n for n in names if n in self.kinds]
        if not names:
            return []
        if decoded.why_not:
            return [ResponseProblem(NOT_JUDGED, "", f"{op.operation_id} {status}: {not_judged_message(decoded.why_not)}",
                                    "/body")]
        positioned = body if len(body) <= POSITIONED_BYTES else None
        reports = [self.validator.validate_loaded(decoded.loaded, self.kinds[n], data=positioned) for n in names]
        self.judged_kinds.update(self.kinds[n] for n in names)
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
                                    f"{' (' + why + ')' if why else ''}", "/body")]
        findings = best.findings
        worded_by_schema = any(f.rule.startswith(SCHEMA_RULE_PREFIX) for f in findings)  # every branch failed
        branch = self._product_branch(names[0], path_values) if len(names) == 1 and path_values \
            and worded_by_schema else None
        if branch is not None:
            issues = [self.validator._finding(i.rule, i.pointer, i.message, False, ref=i.ref)
                      for i in branch.issues(decoded.value)]
            findings = [f for f in findings if not f.rule.startswith(SCHEMA_RULE_PREFIX)] + [f for f in issues if f]
        return [ResponseProblem(f.rule, f.ref or "", f"{op.operation_id} {status} as {best.kind}: {f.pointer or '/'} "
                                f"{f.message}", "/body" + f.pointer) for f in findings if f.severity == ERROR][:3]

    def _product_branch(self, schema_name: str, path_values: dict[str, str]) -> SchemaChecker | None:
        """The checker of the branch of ``schema_name`` (an ``anyOf``) that extends the request schema of the
        creation of the path's payment-service x payment-product (the payment detail's SEPA, bulk or periodic
        branch), built once per schema and pair; None when the schema has no such branch."""
        pair = (path_values.get(SERVICE), path_values.get(PRODUCT))
        if None in pair:
            return None
        key = ("product-branch", schema_name, pair)
        if key in self.spec._cache:
            return self.spec._cache[key]
        creation = creation_operation(self.spec, *pair)
        wanted = creation.request_schema_ref if creation is not None else None
        found = None
        for branch in self.spec.schema(schema_name).get("anyOf", ()) if wanted else ():
            if any(part.get("$ref") == wanted for part in branch.get("allOf", ()) if isinstance(part, dict)):
                bundled = bundled_schema(self.spec, schema_name)
                schema = {"$schema": DRAFT, **branch, "components": bundled["components"]}
                found = SchemaChecker(self.spec, schema_name, schema=schema)
                break
        self.spec._cache[key] = found
        return found

    # ---- links ----
    def link_problems(self, path: str, path_values: dict[str, str], body: bytes,
                      schema: dict | None = None, *, decoded: Decoded | None = None) -> list[ResponseProblem]:
        """Each ``_links`` href of the answer (at any depth) stays on the target's origin (or one allowed) and leads
        to an operation of the spec, with the answer's own ids (those of the request's path and the ids the answer
        issues). Links whose schema in the answer's ``schema`` says they lead outside the spec's operations
        (``x-links-outside-operations``) are not judged; the SCA page's link is judged for its origin only."""
        value = (decoded if decoded is not None else decode(body)).value
        if not isinstance(value, dict):
            return []
        own = {name: {path_values[name]} for name in OWN_IDS if path_values.get(name)}
        for name in OWN_IDS:
            if isinstance(value.get(name), str):
                own.setdefault(name, set()).add(value[name])
        found = []
        for where, name, href in _links(value, ""):
            if not isinstance(href, str) or self._outside(schema, where):
                continue
            off = self._off_target(path, f"{where}/_links/{name}", href,
                                   self.page_ref if name in self.page_links else LINK_REF)
            if off is not None or name in self.page_links:
                problem = off
            else:
                problem = self._link_problem(path, own, f"{where}/_links/{name}", href)
            if problem:
                found.append(problem)
        return found[:3]

    def _outside(self, schema: dict | None, where: str) -> bool:
        """Whether the spec says the ``_links`` of the object at ``where`` lead outside its operations (worked out
        once per schema and place, array indexes alike)."""
        tokens = tuple("0" if t.isdigit() else t for t in where.split("/") if t)
        key = (id(schema), tokens)
        found = self._outside_cache.get(key)
        if found is None:
            if len(self._outside_cache) >= CACHE_BOUND:  # an answer's own keys make places: bounded
                self._outside_cache.clear()
            found = self._outside_cache[key] = self._outside_now(schema, tokens)
        return found

    def _outside_now(self, schema: dict | None, tokens: tuple[str, ...]) -> bool:
        for token in tokens + ("_links",):
            schema = self._member(schema, token)
            if schema is None:
                return False
        return "x-links-outside-operations" in self.spec.deref(schema)

    def _member(self, schema: Any, token: str) -> Any:
        schema = self.spec.deref(schema) if isinstance(schema, dict) else None
        if not isinstance(schema, dict):
            return None
        for sub in (*schema.get("allOf", ()), *schema.get("anyOf", ()), *schema.get("oneOf", ())):
            found = self._member(sub, token)
            if found is not None:
                return found
        if token in schema.get("properties", {}):
            return schema["properties"][token]
        if token.isdigit() and isinstance(schema.get("items"), dict):
            return schema["items"]
        extra = schema.get("additionalProperties")
        return extra if isinstance(extra, dict) else None

    def _off_target(self, path: str, where: str, href: str, ref: str) -> ResponseProblem | None:
        """A link leading off the allowed origins (origins.py), resolved against the URL of the answer."""
        if self.origins is None:
            return None
        try:
            self.origins.follow(href, self.origins.target.rstrip("/") + path, f"the answer's {where}")
        except OffTarget as off:
            return ResponseProblem(OffTarget.rule, ref, str(off), f"/body{where}/href")
        return None

    def _link_problem(self, path: str, own: dict[str, set[str]], where: str, href: str) -> ResponseProblem | None:
        if href.startswith("/") and not href.startswith("//") and "/." not in href:
            target = href.split("#", 1)[0].split("?", 1)[0]   # the usual link: an absolute path, nothing to join
        else:
            target = urlsplit(urljoin(path, href)).path
        if self.base_path and (target == self.base_path or target.startswith(self.base_path + "/")):
            target = target[len(self.base_path):]
        # A link of the same shape as one found good before -- the same path with this answer's own ids in the
        # same parameters -- is good (every answer links its own resource the same way): no resolving again.
        owner = {value: name for name, values in own.items() for value in values}
        segments = target.split("/")
        shape = "/".join("\x00" + owner[s] if s in owner else s for s in segments)
        if shape in self._good_links:
            return None
        resolved = resolve_path(self.spec, target)
        if resolved.operation is None:
            return ResponseProblem("link-unresolved", LINK_REF, f"{where} {href!r}: no operation of the spec has the "
                                   f"path {target!r}", f"/body{where}/href")
        for name, mine in own.items():
            linked = resolved.path_values.get(name)
            if linked is not None and unquote(linked) not in mine:
                operation = resolved.operation.operation_id
                return ResponseProblem("link-foreign-id", LINK_REF, f"{where} {href!r} ({operation}) names {name} "
                                       f"{unquote(linked)!r}, not this answer's {sorted(mine)[0]!r}",
                                       f"/body{where}/href")
        placed = {name for name, value in resolved.path_values.items() if value in owner and owner[value] == name}
        if all(s not in owner or owner[s] in placed for s in segments):  # each own id sits in its own parameter
            if len(self._good_links) >= CACHE_BOUND:
                self._good_links.clear()
            self._good_links.add(shape)
        return None


def _links(value, where: str):
    """(pointer of the object, link name, href) of every ``_links`` member at any depth, in document order (a walk
    without recursion: a target's nesting is the loader's limit, not the interpreter's)."""
    stack = [(value, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            links = node.get("_links")
            if isinstance(links, dict):
                for name, link in links.items():
                    yield at, name, link.get("href") if isinstance(link, dict) else None
            stack.extend((item, f"{at}/{key}") for key, item in reversed(node.items()) if key != "_links")
        elif isinstance(node, list):
            stack.extend((item, f"{at}/{i}") for i, item in reversed(list(enumerate(node))))
