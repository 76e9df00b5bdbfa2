"""Hypothesis defaults for every test: no per-example deadline and no too-slow health check, because
CI machines are shared and noisy (2 cores); the example counts stay as each test sets them."""
from hypothesis import HealthCheck, settings

settings.register_profile("obvalidate", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("obvalidate")
