"""``/mcp``: the MCP server's streamable HTTP endpoint, inside the web app's WSGI stack.

Whatever serves the app (gunicorn in production) serves agents too, in the same
processes, with the same database, Redis and settings. The sequence in each process:

1. :func:`mount` puts :class:`McpEndpoint` in front of the Flask app for ``/mcp`` (and
   below it); nothing starts yet, so commands that build the app start no thread;
2. the first request to ``/mcp`` builds the server (``app/agents/mcp_server.py``) over the
   app's session factory, adapters, queue and Redis, starts one event loop in a daemon
   thread, and enters the SDK session manager's ``run()`` context on that loop, where
   it stays for the life of the process (it must be running while requests come);
3. each request is handed to that loop by a2wsgi's ``ASGIMiddleware``; the endpoint is
   stateless and answers JSON, so no session lives in one worker's memory and any
   worker answers any request; sync tools run in the loop's worker threads.

The Flask app's own hooks (CSRF, headers, its body limits) do not see these requests:
the MCP server authenticates every tool call itself, and the SDK refuses a body above
:data:`~app.web.limits.APP_MAX_BYTES`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

from a2wsgi import ASGIMiddleware
from flask import Flask
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from app.agents.call_limit import call_limit
from app.agents.mcp_server import ServerContext, build_server, streamable_http_sessions
from app.db import db
from app.jobs.connection import RedisExtension
from app.settings import Settings
from app.web.dispatch import queue_execution
from app.web.limits import APP_MAX_BYTES

MCP_PATH = "/mcp"


class McpEndpoint:
    """A WSGI app serving the MCP server built by ``build`` on first use."""

    def __init__(self, build: Callable[[], MCPServer]) -> None:
        self._build = build
        self._started = threading.Lock()
        self._wsgi: ASGIMiddleware | None = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        # a2wsgi types the environ as its own TypedDict; werkzeug hands over a plain dict.
        return self._running()(environ, start_response)  # type: ignore[arg-type]

    def _running(self) -> ASGIMiddleware:
        with self._started:
            if self._wsgi is None:
                self._wsgi = self._start()
            return self._wsgi

    def _start(self) -> ASGIMiddleware:
        sessions = streamable_http_sessions(self._build(), max_request_body_size=APP_MAX_BYTES)
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="caseward-mcp", daemon=True).start()
        ready = threading.Event()
        running = asyncio.run_coroutine_threadsafe(_keep_running(sessions, ready), loop)
        # A session manager that cannot start ends the coroutine: wake up and say why.
        running.add_done_callback(lambda _: ready.set())
        ready.wait()
        if running.done():
            running.result()
        # The SDK and a2wsgi each type ASGI's scope and messages their own way.
        return ASGIMiddleware(sessions.handle_request, loop=loop)  # type: ignore[arg-type]


async def _keep_running(sessions: StreamableHTTPSessionManager, ready: threading.Event) -> None:
    async with sessions.run():
        ready.set()
        await asyncio.Event().wait()


def mount(app: Flask, settings: Settings) -> None:
    """Serve the MCP endpoint at ``/mcp`` beside the Flask app."""
    endpoint = McpEndpoint(functools.partial(_server_of, app, settings))
    pages = app.wsgi_app

    # Chosen by path without rewriting it (werkzeug's DispatcherMiddleware moves the
    # prefix into SCRIPT_NAME, and the access log would show these requests without it).
    def dispatch(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            return endpoint(environ, start_response)
        return pages(environ, start_response)

    app.wsgi_app = dispatch  # type: ignore[method-assign]


def _server_of(app: Flask, settings: Settings) -> MCPServer:
    redis = RedisExtension.connection(app)
    context = ServerContext(
        session_factory=db.state(app).session_factory,
        adapters=app.extensions["caseward.adapters"],
        settings=settings,
        enqueue=lambda action_id: queue_execution(app, action_id),
        call_limit=call_limit(redis, settings.agent_rate_limit),
    )
    return build_server(context)
