"""A test's HTTP server, served from a thread of the test process.

``socketserver``'s loop looks for a shutdown every ``poll_interval``, 0.5 s unless told: a
test that stops its server after every run would wait that long each time, which over the
suite's hundreds of served apps is minutes. Every server a test serves goes through here.
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager

POLL_SECONDS = 0.02


def serve_in_thread(server: socketserver.BaseServer, name: str = "test-server") -> threading.Thread:
    """Start serving ``server``; ``server.shutdown()`` then returns within a poll."""
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": POLL_SECONDS},
        name=name,
        daemon=True,
    )
    thread.start()
    return thread


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    """Serve ``server`` while the block runs, then shut it down and close its socket."""
    serve_in_thread(server)
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
