"""Calling Caseward's MCP server with the SDK's own client, over streamable HTTP (the
web app's ``/mcp``) and over stdio."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, Tool

# The tool calls an agent credential may make in the tests' app.
RATE_LIMIT_CALLS = 10
RATE_LIMIT = f"{RATE_LIMIT_CALLS}/minute"


@dataclass(frozen=True)
class Agent:
    """An agent holding ``secret``, talking to the server at ``url``."""

    url: str
    secret: str

    def tools(self) -> list[Tool]:
        async def listed(session: ClientSession) -> list[Tool]:
            return (await session.list_tools()).tools

        return anyio.run(self._session, listed)

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        async def called(session: ClientSession) -> CallToolResult:
            return await session.call_tool(tool, arguments)

        return anyio.run(self._session, called)

    def calls(self, tool: str, times: int, **arguments: Any) -> list[CallToolResult]:
        """The same call ``times`` times, one after the other, in one session."""

        async def called(session: ClientSession) -> list[CallToolResult]:
            return [await session.call_tool(tool, arguments) for _ in range(times)]

        return anyio.run(self._session, called)

    def answer(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The tool's structured answer; fails the test if the call was refused."""
        result = self.call(tool, **arguments)
        assert not result.is_error, refusal(result)
        assert result.structured_content is not None
        return result.structured_content

    async def _session(self, use: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.secret}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(self.url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await use(session)


def refusal(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def calls_over_stdio(
    server: StdioServerParameters,
    tool: str,
    arguments: dict[str, Any],
    *,
    between: Callable[[], object],
) -> tuple[CallToolResult, CallToolResult]:
    """The same call twice to one server process spawned with ``server``, over its
    stdin/stdout, with ``between`` done after the first."""

    async def called() -> tuple[CallToolResult, CallToolResult]:
        async with (
            stdio_client(server) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            first = await session.call_tool(tool, arguments)
            between()
            return first, await session.call_tool(tool, arguments)

    return anyio.run(called)
