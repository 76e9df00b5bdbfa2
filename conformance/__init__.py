"""obvalidate's conformance side: it generates, signs and sends requests to an implementation and
judges the answers with the validator. So far: spec-driven generators of valid payloads
(:mod:`conformance.generate`), which the differential tests use and the suites will reuse."""
