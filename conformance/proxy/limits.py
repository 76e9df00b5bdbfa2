"""The proxy's limits and their defaults (README "Watching a TPP's traffic: obvalidate proxy", Limits), in a module
of their own so the command line shows them without importing the forwarding."""
from __future__ import annotations

MAX_CONNECTIONS = 512             # client connections open at once, each with its upstream one
HEADER_TIMEOUT = 10.0             # seconds for a request's line and headers to arrive
IDLE_TIMEOUT = 30.0               # seconds a kept-alive client connection may wait for its next request
MAX_HEADER_BYTES = 64 * 1024      # bytes of a request's line and headers, and of an answer's status line and headers
#                                   (and of a chunk's size line with its extensions, of a chunked body's trailers)
BACKLOG = 64 * 1024 * 1024        # bytes of bodies kept for the judge (exchanges in flight and queued), at most
JUDGE_SECONDS = 5.0               # the judge's time for one exchange, at most (then: not judged, logged)
STOP_SECONDS = 10.0               # after SIGINT/SIGTERM, the judge's time for what is queued (then: only logged)


def client_share(max_connections: int) -> int:
    """The connections one client address may hold by default: a quarter of the limit."""
    return max(1, max_connections // 4)
