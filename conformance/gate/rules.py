"""The rules the scenario checks judge a target by, beside the validator's catalogue (validator.rules): what a
lifecycle shows that no single request or answer does. A scenario files what it sees under one of these ids (or a
catalogue rule's, where one says it: basket-payment-unknown, funds-unavailable-rejected, product-not-offered, ...),
never under its own check id, so one answer seen by two checks -- the same read in the read-back and the concurrent
creations, an unknown id's 200 in the unknown-ids check and in the products check -- is one fingerprint, one finding
naming both checks. The ids the exchange judge uses for the same thing (conformance.exchange.lifecycle:
``foreign-resource-visible``, ``request-id-replay``) are the same ids here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScenarioRule:
    id: str
    ref: str       # the document section or decisions
    title: str


SCENARIO_RULES = {r.id: r for r in (
    ScenarioRule("payment-created", "A23", "a creation answers 201 with a paymentId and transactionStatus RCVD"),
    ScenarioRule("payment-lifecycle", "A23, A24, A25", "a payment's authorisation starts (201 with scaRedirect); the "
                 "payment is PDNG after its debtor account's owner authorises it, RJCT after anyone else does, ACSC "
                 "after the batch run, booked once"),
    ScenarioRule("payment-read-back", "A4", "a payment reads back as created: amounts, accounts, names"),
    ScenarioRule("resource-unknown", "A28, A7", "an id nobody issued reads as 404 RESOURCE_UNKNOWN"),
    ScenarioRule("foreign-resource-visible", "A28", "another TPP's payment does not exist for a TPP: 404 "
                 "RESOURCE_UNKNOWN in a path, 400 RESOURCE_UNKNOWN as a basket's paymentId, and it is left as it was"),
    ScenarioRule("payment-id-unique", "Endpoints", "every 201 of a creation issues its own paymentId"),
    ScenarioRule("request-id-replay", "A29", "a repeated X-Request-ID as the profile's request-id-replay says"),
    ScenarioRule("logical-duplicate", "A30", "a logical duplicate is 409 CONFLICT unless allowLogicalDuplicate=true"),
    ScenarioRule("transaction-pages", "A22", "pages concatenate to the unpaged list; fromDate/toDate filter"),
    ScenarioRule("cancellation", "A5, A27", "a RCVD payment cancels (204, then CANC; or 202 with links to authorise "
                 "it); every other state is refused 409"),
    ScenarioRule("basket-membership", "A34", "a payment in a second basket as the profile's payment-baskets says"),
    ScenarioRule("sca-without-effect", "A35", "an SCA that moves no payment does not say success"),
    ScenarioRule("product-offered", "A31", "each payment product offered answers its operations"),
)}
