"""HTTP plumbing: a threading stdlib server that can also hang up on purpose.

``http.server`` gives socket-level control, which fault injection needs: a
``drop_*_commit`` fault closes the connection without writing a byte, so the client sees
a connection error exactly as it would if the network failed mid-request.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .engine import Response, encode
from .errors import api_error

log = logging.getLogger(__name__)

Dispatch = Callable[[str, str, dict[str, str], bytes], Response]

CONTROL_PREFIX = "/_sandbox/"


class SandboxHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that remembers open connections so ``stop`` can cut them."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], api: Dispatch, control: Dispatch) -> None:
        self.api = api
        self.control = control
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Track the connection, then serve it on its own thread."""
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """Forget the connection once its thread is done with it."""
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Hang up every keep-alive connection (used when stopping)."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nginx"
    sys_version = ""
    timeout = 120
    server: SandboxHTTPServer

    def setup(self) -> None:
        """Disable Nagle: headers and body go out as separate writes, and waiting for the
        peer's delayed ACK would add ~40 ms to every call."""
        super().setup()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name: value for name, value in self.headers.items()}
        # HTTP header names are case-insensitive: normalise to Title-Case for lookups.
        normalised = {"-".join(p.capitalize() for p in k.split("-")): v for k, v in headers.items()}
        dispatch = self.server.control if self.path.startswith(CONTROL_PREFIX) else self.server.api
        try:
            response = dispatch(self.command, self.path, normalised, body)
        except Exception:
            log.exception("stripe sandbox failed to serve %s %s", self.command, self.path)
            response = Response(
                500, encode(api_error().body()), {"Content-Type": "application/json"}
            )
        if response.drop:
            self._hang_up()
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def _hang_up(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)
