"""Importing this module registers every rule of the catalogue."""
from . import accounts, amounts, baskets, dates, engine_rules, errors, properties, remittance, request_rules  # noqa: F401
