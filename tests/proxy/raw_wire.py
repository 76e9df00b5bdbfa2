"""HTTP/1.1 on the wire, for the proxy's byte-for-byte tests: :class:`RawUpstream`, a loopback server that records
each request's bytes exactly as they arrived (head, body framing, trailers) and answers each with scripted bytes;
:func:`exchange`, a client that writes raw request bytes and reads the raw bytes the proxy answers."""
from __future__ import annotations

import socket
import threading
import time


def request_end(data: bytes) -> int | None:
    """Where the first complete request in ``data`` ends (its head, its ``Content-Length`` body or its chunked body
    with the trailers), or None while it is incomplete."""
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    head = data[:head_end].lower()
    at = head_end + 4
    if b"transfer-encoding: chunked" in head:
        while True:
            line_end = data.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(data[at:line_end].split(b";")[0], 16)
            if size == 0:
                end = data.find(b"\r\n\r\n", line_end)   # the trailers' end (at once without any)
                return None if end < 0 else end + 4
            at = line_end + 2 + size + 2
            if at > len(data):
                return None
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            at += int(line.split(b":", 1)[1])
    return at if at <= len(data) else None


class RawUpstream:
    """A loopback upstream answering the n-th request with ``answers[n]`` (raw bytes; the last one repeated), the
    connection closed after it when ``close`` is set. ``received`` holds each request's bytes as they came."""

    def __init__(self, *answers: bytes, close: bool = False) -> None:
        self.answers = list(answers)
        self.close = close
        self.received: list[bytes] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.2)
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> "RawUpstream":
        self._accepting.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopped.set()
        self._accepting.join(5)
        for thread in self._threads:
            thread.join(5)
        self._sock.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        data = b""
        with conn:
            while not self._stopped.is_set():
                end = request_end(data)
                if end is None:
                    try:
                        piece = conn.recv(65536)
                    except TimeoutError:
                        continue
                    except OSError:
                        return
                    if not piece:
                        return
                    data += piece
                    continue
                self.received.append(data[:end])
                data = data[end:]
                answer = self.answers[min(len(self.received) - 1, len(self.answers) - 1)]
                conn.settimeout(30)   # a large answer, to a proxy reading it at its client's pace
                try:
                    conn.sendall(answer)
                except OSError:
                    return
                conn.settimeout(0.2)
                if self.close:
                    return


def read_answer(sock: socket.socket, *, until_close: bool = False, seconds: float = 5) -> bytes:
    """Bytes the proxy sends on ``sock``: until it closes (``until_close``), else until nothing more comes for a
    moment after a complete head."""
    sock.settimeout(0.3)
    data = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            piece = sock.recv(65536)
        except TimeoutError:
            if b"\r\n\r\n" in data and not until_close:
                return data
            continue
        except ConnectionResetError:
            return data
        if not piece:
            return data
        data += piece
    return data


def exchange(port: int, *requests: bytes, until_close: bool = False) -> list[bytes]:
    """Send each request in turn on one connection to the proxy, reading the bytes that come back after each."""
    got = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        for n, request in enumerate(requests):
            sock.sendall(request)
            got.append(read_answer(sock, until_close=until_close and n == len(requests) - 1))
    return got
