"""Seeded generators of distinct payloads for the benchmarks: every payload, entry, account, amount and
reference is different, so no cache of the validator (or the baseline) can answer from a repeat.

The spec's own examples are the templates (their shape follows the spec); the values are drawn from
a seeded random generator and made valid by construction (IBAN mod-97, Norwegian MOD11, KID MOD10,
the currency's minor-unit digits, dates from the spec's example day on). ``conformance.generate``
draws the same kinds of values through Hypothesis, which is meant for search, not for 100,000 draws.
"""
from __future__ import annotations

import copy
import json
import random
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from validator.checks.accounts import make_iban, norwegian_bban_check_digit  # noqa: E402
from validator.checks.kid import kid_check_digit_mod10  # noqa: E402
from validator.rules.examples import spec_example  # noqa: E402
from validator.spec import Spec, load_spec  # noqa: E402

SEPA = "createSepaCreditTransfer request rentToBerlin"
SEPA_MINIMAL = "createSepaCreditTransfer request minimal"
BULK = "createBulkPayment request invoicesWithKid"
NAMES = ("Ingrid", "Ola", "Kari", "Jonas", "Sofie", "Lars", "Emma", "Henrik", "Nora", "Magnus", "Liv", "Erik")
SURNAMES = ("Hansen", "Johansen", "Olsen", "Larsen", "Andersen", "Berg", "Dahl", "Lie", "Moen", "Haugen")
TOWNS = (("Oslo", "0150"), ("Bergen", "5020"), ("Trondheim", "7037"), ("Stavanger", "4006"), ("Tromsø", "9008"))


class Payloads:
    """Distinct valid payloads of the interface's request kinds, reproducible from ``seed``."""

    def __init__(self, seed: int = 7, spec: Spec | None = None):
        self.spec = spec or load_spec()
        self.random = random.Random(seed)
        self.serial = 0
        self._sepa = [spec_example(self.spec, SEPA), spec_example(self.spec, SEPA_MINIMAL)]
        self._bulk = spec_example(self.spec, BULK)

    def _next(self) -> int:
        self.serial += 1
        return self.serial

    def name(self) -> str:
        r = self.random
        return f"{r.choice(NAMES)} {r.choice(SURNAMES)} {self._next()}"

    def bban(self) -> str:
        while True:
            first10 = f"{self.random.randrange(10**9, 10**10):010d}"
            digit = norwegian_bban_check_digit(first10)
            if digit is not None:
                return first10 + digit

    def iban(self, country: str) -> str:
        if country == "NO":
            return make_iban("NO", self.bban())
        return make_iban("DE", f"{self.random.randrange(10**17, 10**18)}")

    def kid(self) -> str:
        body = f"{self.random.randrange(10**8, 10**14)}"
        return body + kid_check_digit_mod10(body)

    def amount(self, digits: int) -> str:
        whole = self.random.randrange(1, 100_000)
        return f"{whole}.{self.random.randrange(10**digits):0{digits}d}" if digits else str(whole)

    def date(self) -> str:
        year, month, day = (int(p) for p in self.spec.example_today.split("-"))
        return f"{year}-{month:02d}-{min(28, day + self.random.randrange(0, 28 - min(day, 27))):02d}"

    def sepa(self) -> dict:
        payload = copy.deepcopy(self._sepa[self.serial % 2])
        n = self._next()
        payload["endToEndIdentification"] = f"E2E-{n:010d}"
        payload["instructedAmount"]["amount"] = self.amount(2)
        payload["creditorName"] = self.name()
        payload["creditorAccount"]["iban"] = self.iban("DE")
        payload["debtorAccount"]["iban"] = self.iban("NO")
        if "remittanceInformationUnstructured" in payload:
            payload["remittanceInformationUnstructured"] = f"Faktura {n}"
        if "requestedExecutionDate" in payload:
            payload["requestedExecutionDate"] = self.date()
        return payload

    def bulk(self, entries: int) -> dict:
        payload = copy.deepcopy(self._bulk)
        templates = payload["payments"]
        payload["paymentInformationId"] = f"BULK-{self._next()}"
        payload["debtorAccount"]["bban"] = self.bban()
        payments = []
        for i in range(entries):
            entry = copy.deepcopy(templates[i % len(templates)])
            entry.pop("debtorName", None)
            entry["endToEndIdentification"] = f"E2E-{self._next():010d}"
            entry["instructedAmount"]["amount"] = self.amount(2)
            entry["creditorName"] = self.name()
            entry["creditorAccount"]["bban"] = self.bban()
            town, postal = self.random.choice(TOWNS)
            entry["creditorAddress"].update({"townName": town, "postalCode": postal})
            if "remittanceInformationStructuredArray" in entry:
                entry["remittanceInformationStructuredArray"] = [{"reference": self.kid(), "referenceType": "SCOR"}]
            payments.append(entry)
        payload["payments"] = payments
        return payload

    def broken_bulk(self, entries: int, errors: int) -> dict:
        """A bulk with ``errors`` error findings spread over its entries, of several rules."""
        payload = self.bulk(entries)
        payments = payload["payments"]
        step = max(1, entries // errors)
        breakers = (
            lambda e: e["instructedAmount"].update(amount=e["instructedAmount"]["amount"] + "1"),  # amount-minor-units
            lambda e: e["creditorAccount"].update(bban=e["creditorAccount"]["bban"][:10]),  # bban-format
            lambda e: e.update(creditorName="N" * 71),  # schema-length
            lambda e: e["instructedAmount"].update(amount="-" + e["instructedAmount"]["amount"]),  # amount-grammar
            lambda e: e["creditorAddress"].update(country="XX"),  # schema-enum
        )
        for n, i in enumerate(range(0, step * errors, step)):
            breakers[n % len(breakers)](payments[i])
        return payload

    # The five defect classes of a mixed SEPA batch (issue 22), each one mistake a TPP makes: the rule meant to
    # catch it, and the change. ``today`` is the day the batch is checked against (an execution date before it).
    SEPA_DEFECTS = ("amount-minor-units", "iban-check-digits", "creditorName-missing", "currency-code", "execution-date-past")

    def broken_sepa(self, defect: str, today: str) -> dict:
        """A distinct SEPA payload with one mistake of the class ``defect`` (one of SEPA_DEFECTS)."""
        payload = self.sepa()
        if defect == "amount-minor-units":  # EUR has 2 minor digits
            payload["instructedAmount"]["amount"] = self.amount(3)
        elif defect == "iban-check-digits":  # the creditor's IBAN with another pair of check digits (mod-97 fails)
            iban = payload["creditorAccount"]["iban"]
            right = int(iban[2:4])  # 02..98: any other of those 97 values is wrong
            wrong = 2 + (right - 2 + 1 + self.random.randrange(96)) % 97
            payload["creditorAccount"]["iban"] = f"{iban[:2]}{wrong:02d}{iban[4:]}"
        elif defect == "creditorName-missing":
            del payload["creditorName"]
        elif defect == "currency-code":
            payload["instructedAmount"]["currency"] = "EURO"
        elif defect == "execution-date-past":
            day = date.fromisoformat(today) - timedelta(days=1 + self.random.randrange(60))
            payload["requestedExecutionDate"] = day.isoformat()
        else:
            raise ValueError(f"unknown defect class {defect!r}; one of {', '.join(self.SEPA_DEFECTS)}")
        return payload

    def mixed_sepa(self, lines: int, today: str) -> Iterator[tuple[str | None, dict]]:
        """``lines`` distinct SEPA payloads, every third one broken (the five defect classes in turn):
        ``(defect class or None, payload)``."""
        for n in range(lines):
            if n % 3 == 2:
                defect = self.SEPA_DEFECTS[(n // 3) % len(self.SEPA_DEFECTS)]
                yield defect, self.broken_sepa(defect, today)
            else:
                yield None, self.sepa()


def encoded(payload) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode()
