"""Calling Caseward's MCP server with the SDK's own client over streamable HTTP."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, Tool


@dataclass(frozen=True)
class McpServerUnderTest:
    url: str
    # Actions the server queued for execution (only a shop policy's approval queues one).
    enqueued: list[uuid.UUID]


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


def call_over_stdio(server: StdioServerParameters, tool: str, **arguments: Any) -> CallToolResult:
    """One tool call to a server process spawned with ``server``, over its stdin/stdout."""

    async def called() -> CallToolResult:
        async with (
            stdio_client(server) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool(tool, arguments)

    return anyio.run(called)
