"""The suites of the conformance gate; importing them registers their checks (conformance.gate.model.REGISTRY)."""
from . import fuzz, security, semantic, stateful  # noqa: F401
