"""Importing this module registers every rule of the catalogue."""
from . import accounts, amounts, baskets, dates, engine_rules, errors, periodic, properties, remittance, request_rules, status  # noqa: F401
