"""The suites of the conformance gate; importing them registers their checks (conformance.gate.model.REGISTRY)."""
from . import fuzz, security, semantic, stateful  # noqa: F401
from . import boundaries  # noqa: F401,E402 - the negative suite's, after the Schemathesis checks
from . import reads  # noqa: F401,E402 - after the scenarios: reads of what they left (stateful suite)
from . import links  # noqa: F401,E402 - last: the walk over the links runs after the targeted scenarios
