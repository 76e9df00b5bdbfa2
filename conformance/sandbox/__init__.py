"""The reference sandbox: a faithful, durable implementation of the interface, with fault switches.

``obvalidate sandbox serve`` runs it (Starlette on uvicorn, state in SQLite); :func:`create_app` builds the ASGI
application for tests. Layout: ``app.py`` (HTTP: routing table, request check by the validator, error bodies),
``sca.py`` (the SCA page), ``lifecycle.py`` (payments, baskets, authorisation, batch runs), ``domain.py`` (sandbox
test data), ``storage.py`` (all SQL), ``testdata.py`` (A32), ``faults.py`` (fault switches), ``clock.py``.
"""
from .app import Sandbox, create_app

__all__ = ["Sandbox", "create_app"]
