"""Account identifiers: IBAN (ISO 13616) and Norwegian BBAN (A12); same debtor and creditor."""
from __future__ import annotations

import functools

from ..checks import accounts as _accounts
from ..findings import ERROR, WARNING
from . import Example, Issue, rule

REF = "Resources and their fields › Account reference"

# Two rules read each IBAN (error and national-check warning) and each BBAN (format and MOD11):
# check each value once. The checks are pure and return immutable tuples.
check_iban = functools.lru_cache(maxsize=8192)(_accounts.check_iban)
check_norwegian_bban = functools.lru_cache(maxsize=8192)(_accounts.check_norwegian_bban)
SEPA = "createSepaCreditTransfer request rentToBerlin"
BULK = "createBulkPayment request invoicesWithKid"


@rule(
    "iban-invalid",
    name="IBAN well formed with valid check digits",
    ref=REF,
    targets=["iban-invalid"],
    direction=None,
    assumptions=["A12"],
    good=Example("sepa-credit-transfer", base=SEPA),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/creditorAccount/iban", "DE89370400440532013001"),), pointer="/creditorAccount/iban"),
)
def iban_invalid(value, ctx, at):
    """An IBAN is in ISO 13616 electronic form (upper case, no spaces, at most 34 characters), has the
    registry's length and structure for its country, check digits other than 00, 01 and 99, and
    passes the mod-97 check."""
    if not isinstance(value, str):
        yield Issue("", f"the IBAN must be a string, got {type(value).__name__}")
        return
    for problem in check_iban(value):
        if problem.severity == ERROR:
            yield Issue("", problem.message)
            return


@rule(
    "iban-national-check",
    name="National check digit inside the IBAN",
    ref=REF,
    targets=["iban-invalid"],
    direction=None,
    severity=WARNING,
    assumptions=["A12"],
    good=Example("sepa-credit-transfer", base=SEPA),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/debtorAccount/iban", "NO6686011117948"),), pointer="/debtorAccount/iban"),
)
def iban_national_check(value, ctx, at):
    """A national check digit inside the IBAN (such as a Norwegian account number's MOD11) that fails
    is only a warning: the IBAN's own mod-97 check decides validity."""
    if not isinstance(value, str):
        return
    problems = check_iban(value)
    if problems and all(p.severity == WARNING for p in problems):
        yield Issue("", problems[0].message)


@rule(
    "bban-format",
    name="Norwegian BBAN has 11 digits",
    ref=REF,
    targets=["AccountReferenceBban"],
    direction=None,
    assumptions=["A12"],
    good=Example("bulk-payment", base=BULK),
    bad=Example("bulk-payment", base=BULK, patch=(("/payments/0/creditorAccount/bban", "1503.39.82590"),), pointer="/payments/0/creditorAccount/bban"),
)
def bban_format(account, ctx, at):
    """A Norwegian domestic account number (BBAN) in the bulk product is exactly 11 digits."""
    if not isinstance(account, dict) or not isinstance(account.get("bban"), str):
        return
    for problem in check_norwegian_bban(account["bban"]):
        if problem.severity == ERROR:
            yield Issue("/bban", problem.message)
            return


@rule(
    "bban-check-digit",
    name="Norwegian BBAN MOD11 check digit",
    ref=REF,
    targets=["AccountReferenceBban"],
    direction=None,
    severity=WARNING,
    assumptions=["A12"],
    good=Example("bulk-payment", base=BULK),
    bad=Example("bulk-payment", base=BULK, patch=(("/debtorAccount/bban", "12547919075"),), pointer="/debtorAccount/bban"),
)
def bban_check_digit(account, ctx, at):
    """A Norwegian BBAN whose MOD11 check digit fails is a warning only: the bank accepts some
    internal accounts, and the platform's own sandbox data fails MOD11."""
    if not isinstance(account, dict) or not isinstance(account.get("bban"), str):
        return
    problems = check_norwegian_bban(account["bban"])
    if problems and all(p.severity == WARNING for p in problems):
        yield Issue("/bban", problems[0].message)


def _account_id(account) -> str | None:
    if isinstance(account, dict):
        value = account.get("iban", account.get("bban"))
        return value if isinstance(value, str) and value else None
    return None


@rule(
    "same-debtor-creditor",
    name="Debtor and creditor accounts differ",
    ref=REF,
    targets=["SepaCreditTransferRequest", "BulkPaymentRequest", "PeriodicPaymentRequest"],
    severity=WARNING,
    good=Example("bulk-payment", base=BULK),
    bad=Example("bulk-payment", base=BULK, patch=(("/payments/2/creditorAccount/bban", "12547919074"),), pointer="/payments/2/creditorAccount"),
)
def same_debtor_creditor(payment, ctx, at):
    """A payment from an account to itself moves no money; it is usually a copy-paste slip (the
    vendor's own bulk sample has one)."""
    if not isinstance(payment, dict):
        return
    debtor = _account_id(payment.get("debtorAccount"))
    if debtor is None:
        return
    if "payments" in payment and isinstance(payment["payments"], list):
        for i, entry in enumerate(payment["payments"]):
            if isinstance(entry, dict) and _account_id(entry.get("creditorAccount")) == debtor:
                yield Issue(f"/payments/{i}/creditorAccount", f"creditor account {debtor} is the debtor account")
    elif _account_id(payment.get("creditorAccount")) == debtor:
        yield Issue("/creditorAccount", f"creditor account {debtor} is the debtor account")
