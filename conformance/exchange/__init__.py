"""The exchange judge: one HTTP request exactly as sent and its answer exactly as received, judged against the
spec, the validator and the profile -- the client's defects and the server's, and what the session's earlier
exchanges show (:mod:`.lifecycle`). The gate, the proxy and ``obvalidate traffic`` all judge with it.

Modules by layer, highest first (pyproject's import-linter contract ``exchange-layers``): :mod:`.judge`;
:mod:`.lifecycle`; :mod:`.oracle` (the validator's whole-request check and prediction), :mod:`.responses` (an
answer against the spec and the response kinds), :mod:`.reasons` (the place a refusal names); :mod:`.expect`,
:mod:`.record`.
"""
from .judge import ExchangeFinding, ExchangeJudge, Judgement
from .record import RecordedAnswer, RecordedRequest

__all__ = ["ExchangeFinding", "ExchangeJudge", "Judgement", "RecordedAnswer", "RecordedRequest"]
