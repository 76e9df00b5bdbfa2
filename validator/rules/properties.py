"""Unknown properties in request bodies (A19) and the currency a product expects (A21)."""
from __future__ import annotations

from ..findings import WARNING, escape_pointer_token
from ..schema import closest
from . import EVERY_OBJECT, REMOVE, Example, Issue, rule

BULK = "createBulkPayment request invoicesWithKid"
SEPA = "createSepaCreditTransfer request rentToBerlin"


@rule(
    "unknown-property",
    name="Unknown property in a request body",
    ref="Resources and their fields",
    targets=[EVERY_OBJECT],
    applies_at=lambda shape: shape is not None and not shape.open_map,
    severity=WARNING,
    assumptions=["A19"],
    good=Example("bulk-payment", base=BULK),
    bad=Example(
        "bulk-payment",
        base=BULK,
        patch=(("/payments/0/remittanceInformationStructuredArray/0/referencType", "SCOR"),),
        pointer="/payments/0/remittanceInformationStructuredArray/0/referencType",
    ),
)
def unknown_property(obj, ctx, at):
    """The document does not forbid properties it does not list, so they pass; but an unknown name is
    usually a misspelling (the vendor's own bulk sample sends 'referencType'), so each one is
    reported with the closest declared name, or as belonging to another resource of the interface."""
    shape = at.shape
    if not isinstance(obj, dict) or shape is None or shape.open_map or obj.keys() <= shape.properties:
        return
    for key in sorted(obj.keys() - shape.properties):
        if key in _spec_property_names(ctx.spec):
            message = f"{key!r} is a property of other resources of the interface, not of this one"
        else:
            close = closest(key, shape.sorted_properties, 0.7)
            message = f"unknown property {key!r}" + (f"; did you mean {close!r}?" if close else "")
        yield Issue("/" + escape_pointer_token(key), message)


def _spec_property_names(spec) -> frozenset[str]:
    cache = spec._cache
    if "property_names" not in cache:
        names: set[str] = set()
        stack = [spec.schemas]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                names.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else ())
                stack.extend(v for k, v in node.items() if not k.startswith("x-"))
            elif isinstance(node, list):
                stack.extend(node)
        cache["property_names"] = frozenset(names)
    return cache["property_names"]


@rule(
    "deprecated-property",
    name="Deprecated property used",
    ref="Resources and their fields",
    targets=[EVERY_OBJECT],
    applies_at=lambda shape: shape is not None and bool(shape.deprecated),
    severity=WARNING,
    assumptions=["A20"],
    good=Example("bulk-payment", base=BULK),
    bad=Example(
        "bulk-payment",
        base=BULK,
        patch=(
            ("/payments/0/remittanceInformationStructuredArray", REMOVE),
            ("/payments/0/remittanceInformationStructured", {"reference": "1234567890128", "referenceType": "SCOR"}),
        ),
        pointer="/payments/0/remittanceInformationStructured",
    ),
)
def deprecated_property(obj, ctx, at):
    """A property the spec marks deprecated still works but is on its way out: the single-object
    remittanceInformationStructured (release 1.16.2, in favour of the list form) and city in the bulk
    payment's address (in favour of townName)."""
    shape = at.shape
    if not isinstance(obj, dict) or shape is None:
        return
    for name, why in shape.deprecated:
        if name in obj:
            yield Issue("/" + escape_pointer_token(name), f"{name} is deprecated" + (f": {why}" if why else ""))


@rule(
    "currency-product-mismatch",
    name="Currency expected by the payment product",
    ref="Resources and their fields › Amount",
    targets=["SepaCreditTransferRequest", "BulkEntry"],
    severity=WARNING,
    assumptions=["A21"],
    good=Example("sepa-credit-transfer", base=SEPA),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/currency", "SEK"),), pointer="/instructedAmount/currency"),
)
def currency_product_mismatch(payment, ctx, at):
    """A SEPA credit transfer is a euro payment and a Norwegian domestic transfer a krone payment:
    another instructed currency is suspicious (the spec's x-expected-currency per product)."""
    expected = ctx.spec.schema(at.target).get("x-expected-currency")
    amount = payment.get("instructedAmount") if isinstance(payment, dict) else None
    currency = amount.get("currency") if isinstance(amount, dict) else None
    if expected and isinstance(currency, str) and currency != expected:
        title = ctx.spec.schema(at.target).get("title", at.target).lower()
        yield Issue("/instructedAmount/currency", f"instructed in {currency}; a {title} is expected in {expected}")
