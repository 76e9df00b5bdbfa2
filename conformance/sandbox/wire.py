"""Reading a request's body off the wire with a bound, for the API endpoints and the SCA page alike."""
from __future__ import annotations

from starlette.requests import Request


async def read_body(request: Request, limit: int) -> bytes | None:
    """The exact body bytes, or None when longer than ``limit`` (memory stays bounded)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
