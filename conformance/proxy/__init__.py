"""``obvalidate proxy``: a validating reverse proxy between a TPP and a bank (or the reference sandbox).

Every request and answer is forwarded byte for byte (:mod:`.forward`, an ASGI application served by uvicorn,
forwarding through httpcore, httpx's transport), and each exchange is judged once its answer is complete by the
exchange judge (:mod:`conformance.exchange`), in a worker off the answer's path (:mod:`.judging`): a line per
exchange on the terminal, JSON lines in ``--log``, a HAR in ``--record``, the report in ``--report-dir``
(:mod:`.report`). Modules by layer, highest first: :mod:`.cli`; :mod:`.report`; :mod:`.judging`; :mod:`.forward`;
:mod:`.upstream`; :mod:`.limits` (the limits' defaults).
"""
