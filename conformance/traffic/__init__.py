"""``obvalidate traffic``: recorded exchanges (HAR 1.2, the proxy's JSONL log) judged by the exchange judge, each at
its own recorded time, in recorded order, as one session. :mod:`.har` reads and writes the recordings."""
