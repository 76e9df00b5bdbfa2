"""What a session's earlier exchanges show about a later one: the resources created (and by which TPP), the
statuses seen, the basket members, the X-Request-IDs used, the SCA pages linked.

Each finding is decided from the documents and decisions, from what was seen, never from what was not:

- ``status-backwards`` -- a payment's status must be one its last seen status can reach by the spec's
  ``x-transitions`` (A24, A25, A27: RCVD -> PDNG, RJCT, CANC; PDNG -> ACSC, PART, RJCT); statuses outside those
  transitions (ACTC, ACSP, ... which another bank may use) are not judged;
- ``basket-status-worst-case`` -- a basket's status must be the worst case (A2, the profile's ranking) of some
  statuses its payments can have now: each member's last seen status or one it can reach since (an unseen member
  can have any), so only a status no such combination gives is a finding;
- ``request-id-replay`` -- a POST or DELETE of one TPP repeating an X-Request-ID within 24 h (A29, the profile's
  request-id-replay): the same request answered with another status or another payment than the first time
  (first-response), or a repeat answered as a success where it is 409 CONFLICT (another request; any repeat with
  conflict);
- ``foreign-resource-visible`` -- a payment, basket or authorisation another TPP created answered as a success:
  for this TPP it does not exist (A28: 404 RESOURCE_UNKNOWN in a path, 400 RESOURCE_UNKNOWN as a basket's
  paymentId). A TPP is its certificate's organizationIdentifier (else its subject DN) with its key, or the
  identifier alone under a CA the bank trusts (A39): the judge cannot know which, so only two certificates naming
  different identifiers are two TPPs to it.

Bounded: at most ``capacity`` resources and as many X-Request-IDs are remembered, the least recently seen dropped
first (a long proxy session does not grow); what was dropped is then unknown, which is never a finding.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable
from urllib.parse import unquote, urlsplit

from validator.context import Context, PaymentFacts, Profile
from validator.signing.certificate import tpp_identity
from validator.spec import Operation, Spec

from .record import RecordedAnswer, RecordedRequest

DEFAULT_CAPACITY = 10_000
REPLAY_WINDOW = _dt.timedelta(hours=24)   # A29
WRITE_METHODS = frozenset({"POST", "DELETE"})   # A29: the methods a repeated X-Request-ID is judged for
ID_NAMES = ("paymentId", "basketId", "authorisationId")


@dataclass
class Resource:
    kind: str                      # paymentId, basketId or authorisationId
    owner: str | None              # the TPP that created it (A28), None when unknown
    service: str | None = None     # a payment's payment-service and -product
    product: str | None = None
    status: str | None = None      # the last transactionStatus seen
    members: tuple[str, ...] | None = None   # a basket's paymentIds


@dataclass(frozen=True)
class Replay:
    at: _dt.datetime
    method: str
    target: str
    body_sha256: str
    status: int
    issued: tuple[tuple[str, str], ...]   # the ids the first answer issued


class Bounded(OrderedDict):
    """A mapping keeping the ``capacity`` most recently used entries."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def get_recent(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)


class Lifecycle:
    def __init__(self, spec: Spec, profile: Profile, *, capacity: int = DEFAULT_CAPACITY) -> None:
        self.spec = spec
        self.profile = profile
        self.resources: Bounded = Bounded(capacity)
        self.request_ids: Bounded = Bounded(capacity)
        self.sca_pages: Bounded = Bounded(capacity)
        transitions = spec.schema("TransactionStatusBulk").get("x-transitions", ())
        moves: dict[str, set[str]] = {}
        for t in transitions:
            moves.setdefault(t["from"], set()).add(t["to"])
            moves.setdefault(t["to"], set())
        self.reachable = {status: _closure(status, moves) for status in moves}
        self.statuses = tuple(spec.code_set("TransactionStatusBulk"))
        ranking = profile.basket_status_ranking or tuple(
            (r["basket"], tuple(r["payments"])) for r in spec.schema("TransactionStatusBasket")["x-worst-case-ranking"])
        self.rank = {status: i for i, (_basket, members) in enumerate(ranking) for status in members}
        self.basket_values = tuple(basket for basket, _members in ranking)

    # ---- what was linked ----
    def is_sca_page(self, origin: str | None, path: str) -> bool:
        return (origin, path) in self.sca_pages or (None, path) in self.sca_pages

    def learn_skipped(self, request: RecordedRequest, answer: RecordedAnswer) -> None:
        """An exchange not of the spec teaches nothing (the SCA page's outcome shows in later status reads)."""

    # ---- what a request's rules need ----
    def request_context(self, op: Operation, request: RecordedRequest) -> Context | None:
        """The payments a basket creation names, when the judge knows every one (their service decides A7's
        REFERENCE_MIX_INVALID); None otherwise (an unknown member would read as "not in the context")."""
        if not names_payments(self.spec, op):
            return None
        ids = _json(request.body).get("paymentIds")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            return None
        known = {pid: self.resources.get(pid) for pid in ids}
        if any(r is None or r.kind != "paymentId" or r.service is None for r in known.values()):
            return None
        return Context(payments={pid: PaymentFacts(r.service, r.product, r.status) for pid, r in known.items()})

    # ---- judging ----
    def judge(self, op: Operation, path_values: dict[str, str], request: RecordedRequest, answer: RecordedAnswer,
              body: dict, actual: str, finding: Callable[..., Any]) -> list[Any]:
        """The lifecycle findings of a valid request's exchange (``body``: the answer's JSON object, empty when it
        has none or was cut; ``finding(rule, ref, pointer, message, expected)`` builds one), then what it teaches."""
        tpp = tpp_identity(request.header("tpp-signature-certificate"))
        ok = 200 <= answer.status < 300
        found: list[Any] = []
        found += self._replay(op, request, answer, body, tpp, actual, finding)
        foreign = self._foreign(op, path_values, request, tpp) if ok else []
        for name, rid, owner in foreign:
            where = "a basket's paymentId" if name == "paymentIds" else f"the path's {name}"
            wanted = "400 RESOURCE_UNKNOWN" if name == "paymentIds" else "404 RESOURCE_UNKNOWN"
            found.append(finding("foreign-resource-visible", "A28", "/status",
                                 f"{op.operation_id} answered {actual} for {rid!r} ({where}), which TPP {owner!r} "
                                 f"created: for TPP {tpp!r} it does not exist", wanted))
        if ok and not foreign:
            found += self._statuses(op, path_values, request, body, tpp, actual, finding)
            self._learn(op, path_values, request, answer, body, tpp)
        return found

    def _replay(self, op: Operation, request: RecordedRequest, answer: RecordedAnswer, body: dict, tpp: str | None,
                actual: str, finding: Callable[..., Any]) -> list[Any]:
        request_id = request.header("x-request-id")
        choice = self.profile.request_id_replay
        if request.method.upper() not in WRITE_METHODS or not request_id or choice == "new-request":
            return []
        key = (tpp, request_id)
        first: Replay | None = self.request_ids.get_recent(key)
        sha = hashlib.sha256(request.body).hexdigest()
        if first is None or not (_dt.timedelta(0) <= request.at - first.at <= REPLAY_WINDOW):
            self.request_ids.put(key, Replay(request.at, request.method.upper(), request.target, sha, answer.status,
                                             _issued(body)))
            return []
        ref = "A29" if choice == "first-response" else f"A29 (profile request-id-replay: {choice})"
        same = (first.method, first.target, first.body_sha256) == (request.method.upper(), request.target, sha)
        if same and choice == "first-response":
            issued = _issued(body)
            if answer.status != first.status or first.issued and issued and issued != first.issued:
                again = " ".join([str(first.status)] + [v for _n, v in first.issued])
                now = " ".join([str(answer.status)] + [v for _n, v in issued])
                return [finding("request-id-replay", ref, "/headers/x-request-id",
                                f"the request repeating X-Request-ID {request_id} was answered {now}, not the first "
                                f"response again ({again})", f"the first response again ({again})")]
            return []
        if 200 <= answer.status < 300:
            what = "the same request" if same else "another request"
            return [finding("request-id-replay", ref, "/headers/x-request-id",
                            f"{what} repeating X-Request-ID {request_id} (first used {first.method} {first.target}) "
                            f"was answered {actual}: nothing new may happen", "409 CONFLICT")]
        return []

    def _foreign(self, op: Operation, path_values: dict[str, str], request: RecordedRequest,
                 tpp: str | None) -> list[tuple[str, str, str]]:
        """(where, id, owner) of each resource the request names that another TPP created."""
        if tpp is None:
            return []
        named = [(name, unquote(path_values[name])) for name in ID_NAMES if path_values.get(name)]
        if names_payments(self.spec, op):
            ids = _json(request.body).get("paymentIds")
            named += [("paymentIds", i) for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
        out = []
        for name, rid in named:
            resource = self.resources.get(rid)
            if resource is not None and resource.owner is not None and resource.owner != tpp:
                out.append((name, rid, resource.owner))
        return out

    def _statuses(self, op: Operation, path_values: dict[str, str], request: RecordedRequest, body: dict,
                  tpp: str | None, actual: str, finding: Callable[..., Any]) -> list[Any]:
        status = body.get("transactionStatus")
        if not isinstance(status, str) or "authorisationId" in path_values or op.path.endswith("/authorisations"):
            return []
        if path_values.get("paymentId"):
            resource = self.resources.get_recent(unquote(path_values["paymentId"]))
            if resource is None or resource.status is None:
                return []
            before = resource.status
            if before in self.reachable and status in self.reachable and status not in self.reachable[before]:
                moves = ", ".join(sorted(self.reachable[before] - {before})) or "none"
                return [finding("status-backwards", "A24, A25, A27", "/body/transactionStatus",
                                f"payment {resource_name(path_values)} was {before} and is now {status}: "
                                f"{before} moves only to {moves} (x-transitions)",
                                f"{before} or a status it moves to ({moves})")]
            return []
        basket_id = path_values.get("basketId") or (body.get("basketId") if names_payments(self.spec, op) else None)
        if isinstance(basket_id, str) and basket_id:
            members = self._members(op, path_values, request, body, unquote(basket_id))
            if members:
                possible = self.worst_cases(members)
                if possible and status in self.basket_values and status not in possible:
                    return [finding("basket-status-worst-case", "A2", "/body/transactionStatus",
                                    f"basket {basket_id!r} is {status}, but the worst case of its payments' statuses "
                                    f"({self._seen(members)}) can only be {'/'.join(possible)}",
                                    "/".join(possible))]
        return []

    def _members(self, op: Operation, path_values: dict[str, str], request: RecordedRequest, body: dict,
                 basket_id: str) -> tuple[str, ...] | None:
        listed = body.get("payments")
        if isinstance(listed, list) and listed and all(isinstance(i, str) for i in listed):
            return tuple(listed)
        if names_payments(self.spec, op):
            ids = _json(request.body).get("paymentIds")
            return tuple(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else None
        resource = self.resources.get_recent(basket_id)
        return resource.members if resource is not None else None

    def possible_now(self, payment_id: str) -> tuple[str, ...]:
        """The statuses a payment can have now: the last one seen or one it reaches; any, unseen or outside the
        transitions."""
        resource = self.resources.get(payment_id)
        if resource is None or resource.status not in self.reachable:
            return self.statuses
        return tuple(self.reachable[resource.status])

    def worst_cases(self, members: Iterable[str]) -> tuple[str, ...]:
        """The basket values some combination of its payments' possible statuses gives (A2)."""
        unranked = len(self.basket_values)
        ranks = [{self.rank.get(s, unranked) for s in self.possible_now(pid)} for pid in members]
        if not ranks:
            return ()
        return tuple(value for r, value in enumerate(self.basket_values)
                     if any(r in rs for rs in ranks) and all(any(x >= r for x in rs) for rs in ranks))

    def _seen(self, members: Iterable[str]) -> str:
        out = []
        for pid in members:
            resource = self.resources.get(pid)
            out.append(f"{pid} {resource.status if resource and resource.status else 'unseen'}")
        return ", ".join(out[:5]) + (", …" if len(out) > 5 else "")

    # ---- learning ----
    def _learn(self, op: Operation, path_values: dict[str, str], request: RecordedRequest, answer: RecordedAnswer,
               body: dict, tpp: str | None) -> None:
        if op.operation_id == "initializeSandbox":  # A32: all sandbox state replaced
            self.resources.clear()
            self.request_ids.clear()
            return
        status = body.get("transactionStatus") if isinstance(body.get("transactionStatus"), str) else None
        if request.method.upper() == "POST" and isinstance(body.get("paymentId"), str) and "paymentId" not in path_values:
            service, product = _service_product(op, path_values)
            self.resources.put(body["paymentId"], Resource("paymentId", tpp, service, product, status))
        elif request.method.upper() == "POST" and isinstance(body.get("basketId"), str) and "basketId" not in path_values:
            ids = _json(request.body).get("paymentIds")
            members = tuple(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else None
            self.resources.put(body["basketId"], Resource("basketId", tpp, status=status, members=members))
        elif isinstance(body.get("authorisationId"), str) and "authorisationId" not in path_values:
            self.resources.put(body["authorisationId"], Resource("authorisationId", tpp))
        elif request.method.upper() == "DELETE" and path_values.get("basketId") and answer.status == 204:
            self.resources.pop(unquote(path_values["basketId"]), None)  # A27: a deleted basket is 404
        elif request.method.upper() == "DELETE" and path_values.get("paymentId") and answer.status == 204:
            # cancelled without an authorisation (a 202 asks for one: nothing changed yet): CANC, which a basket
            # holding it counts at its worst (A2)
            payment_id = unquote(path_values["paymentId"])
            resource = self.resources.get_recent(payment_id)
            if resource is not None:
                resource.status = "CANC"
            else:
                service, product = _service_product(op, path_values)
                self.resources.put(payment_id, Resource("paymentId", None, service, product, "CANC"))
        elif status is not None and not path_values.get("authorisationId"):
            for name in ("paymentId", "basketId"):
                if path_values.get(name):
                    resource = self.resources.get_recent(unquote(path_values[name]))
                    if resource is not None:
                        resource.status = status
                        listed = body.get("payments")
                        if name == "basketId" and isinstance(listed, list) and all(isinstance(i, str) for i in listed):
                            resource.members = tuple(listed)
                    elif name == "paymentId":
                        service, product = _service_product(op, path_values)
                        self.resources.put(unquote(path_values[name]), Resource(name, None, service, product, status))
                    break
        page = ((body.get("_links") or {}).get("scaRedirect") or {}).get("href") \
            if isinstance(body.get("_links"), dict) else None
        if isinstance(page, str) and page:
            parts = urlsplit(page)
            origin = f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else None
            self.sca_pages.put((origin, parts.path or "/"), True)


def resource_name(path_values: dict[str, str]) -> str:
    return repr(unquote(path_values.get("paymentId") or path_values.get("basketId") or ""))


def _closure(start: str, moves: dict[str, set[str]]) -> frozenset[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in moves.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


def _json(body: bytes) -> dict:
    if not body or body.lstrip()[:1] != b"{":
        return {}
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def body_ids(body: bytes) -> list[str]:
    """The paymentIds a basket creation's body names (the ones that are text)."""
    ids = _json(body).get("paymentIds")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _issued(body: dict) -> tuple[tuple[str, str], ...]:
    return tuple((name, body[name]) for name in ID_NAMES if isinstance(body.get(name), str))


def names_existing(spec: Spec, op: Operation) -> frozenset[str]:
    """The members of the operation's request body that name resources that must already exist (the spec's
    ``x-names-existing``: a basket's paymentIds, a sandbox account's customerNumber)."""
    cache = spec._cache.setdefault("exchange-names-existing", {})
    found = cache.get(op.operation_id)
    if found is None:
        schema = spec.deref(spec.deref(op.raw.get("requestBody") or {}).get("content", {})
                            .get("application/json", {}).get("schema") or {})
        found = cache[op.operation_id] = frozenset(
            name for name, member in (schema.get("properties") or {}).items()
            if isinstance(member, dict) and "x-names-existing" in member)
    return found


def names_payments(spec: Spec, op: Operation) -> bool:
    """Whether the operation's body names payments by id (a signing basket's paymentIds)."""
    return "paymentIds" in names_existing(spec, op)


def _service_product(op: Operation, path_values: dict[str, str]) -> tuple[str | None, str | None]:
    if path_values.get("payment-service") and path_values.get("payment-product"):
        return path_values["payment-service"], path_values["payment-product"]
    parts = op.path.split("/")
    if len(parts) == 4 and "{" not in op.path:
        return parts[2], parts[3]
    return None, None
