"""The one loader of spec/openapi.yaml, and accessors for what the rest of obvalidate reads.

Nothing here knows a field, a code or a limit: operations, schemas, code sets, minor units and
kinds are all read from the spec. The parsed document is cached per process, and across
processes as marshal data keyed by the YAML's content (a CLI start loads that, not the YAML).
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Callable, Iterator

from .cache import MARSHAL_TAG, code_key, read_marshal, source_key, write_marshal
from .records import record

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
SPEC_ENV = "OBVALIDATE_SPEC"


class SpecError(Exception):
    """The spec file is missing or unreadable."""


def default_spec_path() -> Path:
    """``$OBVALIDATE_SPEC``; else the checkout's spec/openapi.yaml (an editable install, the tests); else the copy an
    installed package carries in share/obvalidate under its scheme's data directory (pyproject.toml's data-files)."""
    env = os.environ.get(SPEC_ENV)
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parent.parent / "spec" / "openapi.yaml"
    if checkout.is_file():
        return checkout
    from importlib import metadata  # only an installed copy gets here: its RECORD names where the spec went

    try:
        files = metadata.files("obvalidate") or ()
    except metadata.PackageNotFoundError:
        files = ()
    for file in files:
        if file.name == "openapi.yaml" and file.parent.name == "obvalidate":
            return Path(file.locate())
    return checkout


def _parse_yaml(text: bytes) -> dict:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader either way


def read_spec_document(path: Path) -> dict:
    """Parse the YAML, going through the JSON cache when it holds this exact content."""
    return _read_spec(path)[0]


def _read_spec(path: Path) -> tuple[dict, str]:
    """The document and the key of its content."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"cannot read the spec {path}: {exc.strerror or exc}") from exc
    key = source_key(data)
    name = f"spec-{key}.{MARSHAL_TAG}.marshal"
    document = read_marshal(name)
    if isinstance(document, dict):
        return document, key
    document = _parse_yaml(data)
    write_marshal(name, document)  # best effort: a read-only home only costs the YAML parse next time
    return document, key


class Parameter:
    """One parameter of an operation; ``key`` is its name as compared: header names case-insensitively."""

    __slots__ = ("name", "location", "required", "schema", "raw", "key")

    def __init__(self, name: str, location: str, required: bool, schema: dict, raw: dict):
        self.name = name
        self.location = location  # path | query | header
        self.required = required
        self.schema = schema
        self.raw = raw
        self.key = name.lower() if location == "header" else name


class Operation:
    """One operation of the spec, its parameters resolved."""

    def __init__(self, operation_id: str, method: str, path: str, raw: dict, parameters: tuple[Parameter, ...],
                 request_schema_ref: str | None, responses: dict[str, dict]):
        self.operation_id = operation_id
        self.method = method  # upper case
        self.path = path
        self.raw = raw
        self.parameters = parameters
        self.request_schema_ref = request_schema_ref
        self.responses = responses

    @functools.cached_property
    def header_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.location == "header")

    @property
    def query_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.location == "query")

    @property
    def path_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.location == "path")

    @property
    def document_ref(self) -> str | None:
        return self.raw.get("x-document-ref")

    @property
    def assumptions(self) -> tuple[str, ...]:
        return as_tuple(self.raw.get("x-assumption"))

    @property
    def header_table_column(self) -> int | None:
        col = self.raw.get("x-header-table-column")
        return col if isinstance(col, int) else None

    @property
    def content_headers(self) -> dict[str, dict]:
        """Accept / Content-Type, which OpenAPI cannot declare as parameters."""
        return dict(self.raw.get("x-headers") or {})


@record
class Kind:
    """A payload kind: a component schema marked x-kind, and the operations whose bodies it is."""

    name: str
    direction: str  # request | response
    schema_name: str
    operations: tuple[str, ...]  # "createBulkPayment 201" style for responses

    @property
    def is_request(self) -> bool:
        return self.direction == "request"


def as_tuple(value: Any) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


class Spec:
    """The parsed spec document and what is derived from it, computed once (``_cache``)."""

    def __init__(self, document: dict, path: Path, key: str | None = None):
        self.document = document
        self.path = path
        self.key = key  # of the content read (load_spec): what the derived values remembered across processes are of
        self._cache: dict = {}

    def derived(self, name: str, compute: Callable[[], Any], *code_files: str) -> Any:
        """``compute()``, a value derived from this spec alone (plain data: tuples, strings, numbers, booleans,
        frozensets) by the code of ``code_files`` and of this module, remembered across processes under the spec's
        content and that code's source: a command's start reads it instead of walking the spec again. A spec
        made in memory (no ``key``), or an entry that cannot be read or is no tuple, is computed anew."""
        code = code_key(__file__, *code_files) if self.key else None
        if code is None:
            return compute()
        entry = f"{name}-{self.key}-{code}.{MARSHAL_TAG}.marshal"
        value = read_marshal(entry)
        if not isinstance(value, tuple):
            value = compute()
            write_marshal(entry, value)
        return value

    # ---- raw access ----
    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise SpecError(f"only local references are used in the spec, got {ref!r}")
        node: Any = self.document
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            node = node[token]
        return node

    def deref(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node and len(node) == 1:
            node = self.resolve(node["$ref"])
        return node

    @property
    def components(self) -> dict:
        return self.document.get("components", {})

    @property
    def schemas(self) -> dict[str, dict]:
        return self.components.get("schemas", {})

    def schema(self, name: str) -> dict:
        try:
            return self.schemas[name]
        except KeyError:
            raise SpecError(f"no component schema {name!r} in the spec") from None

    @property
    def info(self) -> dict:
        return self.document.get("info", {})

    @property
    def example_today(self) -> str:
        return self.info["x-example-today"]

    # ---- operations ----
    @property
    def operations(self) -> dict[str, Operation]:
        if "operations" not in self._cache:
            ops: dict[str, Operation] = {}
            for path, item, method, raw in self._raw_operations():
                params = self._parameters([*item.get("parameters", []), *raw.get("parameters", [])])
                ops[raw["operationId"]] = Operation(
                    operation_id=raw["operationId"],
                    method=method.upper(),
                    path=path,
                    raw=raw,
                    parameters=params,
                    request_schema_ref=self._request_schema_ref(raw),
                    responses=self._responses(raw),
                )
            self._cache["operations"] = ops
        return self._cache["operations"]

    def _raw_operations(self) -> Iterator[tuple[str, dict, str, dict]]:
        """(path, path item, method, operation object) for every operation of the document."""
        for path, item in self.document.get("paths", {}).items():
            for method in HTTP_METHODS:
                raw = item.get(method)
                if raw is not None:
                    yield path, item, method, raw

    def _responses(self, raw: dict) -> dict[str, dict]:
        return {code: self.deref(r) for code, r in raw.get("responses", {}).items()}

    def operation(self, operation_id: str) -> Operation:
        try:
            return self.operations[operation_id]
        except KeyError:
            raise SpecError(f"no operation {operation_id!r} in the spec") from None

    def _parameters(self, items: list) -> tuple[Parameter, ...]:
        by_key: dict[tuple[str, str], Parameter] = {}
        for item in items:
            raw = self.deref(item)
            p = Parameter(raw["name"], raw["in"], bool(raw.get("required", False)), raw.get("schema", {}), raw)
            by_key[(p.location, p.key)] = p  # operation level overrides path level
        return tuple(by_key.values())

    def _request_schema_ref(self, raw: dict) -> str | None:
        body = self.deref(raw.get("requestBody")) if raw.get("requestBody") else None
        if not body:
            return None
        schema = body.get("content", {}).get("application/json", {}).get("schema", {})
        return schema.get("$ref")

    # ---- code sets and tables ----
    def code_set(self, name: str) -> tuple[str, ...]:
        """Members of a code-set component (an enum schema), in the spec's order."""
        schema = self.schema(name)
        if "enum" not in schema:
            raise SpecError(f"component {name!r} is not a code set")
        return tuple(schema["enum"])

    @property
    def code_sets(self) -> dict[str, tuple[str, ...]]:
        return {name: tuple(s["enum"]) for name, s in self.schemas.items() if "enum" in s}

    @property
    def minor_units(self) -> dict[str, int]:
        if "minor_units" not in self._cache:
            self._cache["minor_units"] = dict(self.schema("CurrencyCode")["x-minor-units"])
        return self._cache["minor_units"]

    @property
    def batch_run_times(self) -> tuple[str, tuple[str, ...]]:
        """(time zone, "HH:MM" times) of the sandbox's batch runs (A25: x-batch-run-times)."""
        for op in self.operations.values():
            declared = op.raw.get("x-batch-run-times")
            if declared:
                return declared["time-zone"], tuple(declared["times"])
        raise SpecError("the spec declares no x-batch-run-times")

    @property
    def assumptions(self) -> dict[str, dict]:
        return {a["id"]: a for a in self.document.get("x-assumptions", [])}

    # ---- kinds ----
    @property
    def kinds(self) -> dict[str, Kind]:
        if "kinds" not in self._cache:
            self._cache["kinds"] = {row[0]: Kind(*row) for row in self.derived("kinds", self._kind_rows)}
        return self._cache["kinds"]

    def _kind_rows(self) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
        """(name, direction, schema name, operations) of every kind, in the order of the component schemas."""
        users = self._schema_users()
        return tuple((schema["x-kind"], schema["x-kind-direction"], name, tuple(users.get(name, ())))
                     for name, schema in self.schemas.items() if schema.get("x-kind"))

    def kind(self, name: str) -> Kind:
        try:
            return self.kinds[name]
        except KeyError:
            raise SpecError(f"unknown kind {name!r}") from None

    def _schema_users(self) -> dict[str, list[str]]:
        """Component schema name -> the operations (and statuses) whose bodies are that schema."""
        users: dict[str, list[str]] = {}

        def note(schema: dict, label: str) -> None:
            refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", [])]
            for ref in refs:
                if ref and ref.startswith("#/components/schemas/"):
                    users.setdefault(ref.rsplit("/", 1)[1], []).append(label)

        # From the raw operations: building every Operation and its parameters is not needed to name the kinds.
        for _path, _item, _method, raw in self._raw_operations():
            operation_id, request_ref = raw["operationId"], self._request_schema_ref(raw)
            if request_ref:
                note({"$ref": request_ref}, f"{operation_id} request")
            for status, response in self._responses(raw).items():
                media = response.get("content", {}).get("application/json")
                if media:
                    note(media.get("schema", {}), f"{operation_id} {status}")
        return users

    def iter_examples(self) -> Iterator[tuple[str, str, Any]]:
        """(location, schema $ref or component name, example value) for every example in the spec."""
        for op in self.operations.values():
            raw_body = self.deref(op.raw.get("requestBody")) if op.raw.get("requestBody") else None
            if raw_body:
                media = raw_body["content"]["application/json"]
                for name, ex in media.get("examples", {}).items():
                    yield f"{op.operation_id} request example {name}", media["schema"], self.deref(ex)["value"]
            for status, response in op.responses.items():
                media = response.get("content", {}).get("application/json")
                if not media:
                    continue
                for name, ex in media.get("examples", {}).items():
                    yield f"{op.operation_id} {status} example {name}", media["schema"], self.deref(ex)["value"]


@functools.lru_cache(maxsize=4)
def _load(path: str) -> Spec:
    document, key = _read_spec(Path(path))
    return Spec(document, Path(path), key)


def load_spec(path: str | os.PathLike | None = None) -> Spec:
    """The parsed spec, once per process per path."""
    return _load(str(Path(path) if path else default_spec_path()))
