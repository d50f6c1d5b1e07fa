"""HTTP plumbing shared by the sandboxes: a threaded server that can hang up on purpose.

``http.server`` gives socket-level control, which fault injection needs: a
``drop_*_commit`` fault closes the connection without writing a byte, so the client sees
a connection error exactly as it would if the network failed mid-request.

The sequence of one serving sandbox: :class:`Serving` binds a
:class:`SandboxHTTPServer`, serves it from one thread and runs the sandbox's periodic
work (due transitions, snapshots) from a :class:`Ticker` beside it; every request goes
to the sandbox's API dispatcher, or to its control dispatcher under ``/_sandbox/``; a
dispatcher that raises is answered with the provider's own 500 body; ``stop`` cuts
keep-alive connections so a stopped sandbox really is gone. Run as a process,
:func:`serve_until_signalled` prints what clients need and serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)

CONTROL_PREFIX = "/_sandbox/"


@dataclass
class Response:
    """What to send back, or ``drop`` to close the connection without answering.

    ``replayed`` marks an answer saved earlier for an idempotency key and sent again (the
    received-request log reports it)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    replayed: bool = False


# method, target (path and query), headers (Title-Case names), body
Dispatch = Callable[[str, str, dict[str, str], bytes], Response]


def title_case(name: str) -> str:
    """``x-shopify-access-token`` -> ``X-Shopify-Access-Token``: header names are
    case-insensitive, so dispatchers look them up in one spelling."""
    return "-".join(part.capitalize() for part in name.split("-"))


class SandboxHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that remembers open connections so ``stop`` can cut them.

    ``failure`` builds the provider's answer to a request whose dispatcher raised (a
    Stripe ``api_error``, a Shopify internal error)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        api: Dispatch,
        control: Dispatch,
        *,
        failure: Callable[[], Response],
        name: str = "sandbox",
    ) -> None:
        self.api = api
        self.control = control
        self.failure = failure
        self.name = name
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
        headers = {title_case(name): value for name, value in self.headers.items()}
        control = self.path.startswith(CONTROL_PREFIX)
        dispatch = self.server.control if control else self.server.api
        try:
            response = dispatch(self.command, self.path, headers, body)
        except Exception:
            log.exception("%s failed to serve %s %s", self.server.name, self.command, self.path)
            response = self.server.failure()
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


class Ticker:
    """Runs ``work`` every ``interval`` seconds on a daemon thread until stopped; a
    failing round is logged and the next one runs anyway."""

    def __init__(self, work: Callable[[], object], interval: float, name: str) -> None:
        self._work = work
        self._interval = interval
        self._name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start ticking (no-op when already running)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop ticking and wait for the round in progress."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=timeout)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._work()
            except Exception:
                log.exception("%s failed", self._name)


class Serving:
    """One sandbox on the network: its HTTP server on a thread plus its ticker."""

    def __init__(
        self,
        *,
        name: str,
        api: Dispatch,
        control: Dispatch,
        failure: Callable[[], Response],
        tick: Callable[[], object],
        interval: float,
    ) -> None:
        self._name = name
        self._api = api
        self._control = control
        self._failure = failure
        self._ticker = Ticker(tick, interval, f"{name}-clock")
        self._server: SandboxHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str | None:
        """``http://host:port`` while serving, else ``None``."""
        if self._server is None:
            return None
        raw_host, port = self._server.server_address[0], int(self._server.server_address[1])
        host = raw_host.decode() if isinstance(raw_host, bytes) else str(raw_host)
        return f"http://{host}:{port}"

    def start(self, host: str, port: int) -> tuple[str, int]:
        """Bind ``host:port`` (0 = any free port), serve, tick; returns the bound address."""
        if self._server is not None:
            raise RuntimeError("this sandbox is already serving")
        server = SandboxHTTPServer(
            (host, port), self._api, self._control, failure=self._failure, name=self._name
        )
        self._server = server
        raw_host, bound_port = server.server_address[0], int(server.server_address[1])
        bound_host = raw_host.decode() if isinstance(raw_host, bytes) else str(raw_host)
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{self._name}-http",
            daemon=True,
        )
        self._thread.start()
        self._ticker.start()
        return bound_host, bound_port

    def stop(self) -> None:
        """Stop accepting, cut open connections, stop ticking."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.close_connections()
            server.server_close()
        self._ticker.stop()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)


@dataclass
class SandboxHandle:
    """A running sandbox: where it listens, its control token, and how to stop it."""

    url: str
    host: str
    port: int
    control_token: str
    _stop: Callable[[], None]

    def stop(self) -> None:
        """Stop serving (and whatever the sandbox does on the way out)."""
        self._stop()

    def __enter__(self) -> SandboxHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_until_signalled(handle: SandboxHandle, announce: Sequence[str], name: str) -> int:
    """Print ``announce`` (``KEY=value`` lines, for people and scripts alike), serve until
    SIGINT or SIGTERM, then stop ``handle``; returns the process's exit status."""
    done = threading.Event()

    def _stop(_signum: int, _frame: FrameType | None) -> None:
        done.set()

    # Before announcing: whoever reads the lines may signal at once.
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print("\n".join(announce), flush=True)
    while not done.wait(0.5):
        pass
    handle.stop()
    print(f"{name} stopped", file=sys.stderr, flush=True)
    return 0
