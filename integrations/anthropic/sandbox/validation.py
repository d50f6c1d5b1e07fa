"""A ``POST /v1/messages`` body checked as the Messages API checks it, and read into the
prompt's blocks in cache order.

The body must name a model and ``max_tokens``, hold turns that start with ``user`` and
alternate, declare each tool once with an object ``input_schema``, and force only a tool
it declares; anything else is answered 400 ``invalid_request_error`` with the field's path
in the message, as Anthropic does (an unknown model: 404 ``not_found_error``). Alternating
turns are stricter than the API, which merges consecutive turns of one role: Caseward
never sends those on purpose, so the sandbox catches them.

What passes becomes a :class:`MessagesRequest` whose :attr:`~MessagesRequest.blocks` are
the prompt in the order the prompt cache reads it (tools, then system, then messages),
each with its token estimate (characters / 4, rounded up) and its ``cache_control`` (a
top-level ``cache_control`` marks the last block, as the API's automatic caching does).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

# Seconds a cache entry lives, per ``cache_control.ttl``.
CACHE_TTLS = {"5m": 300.0, "1h": 3600.0}
MAX_CACHE_BREAKPOINTS = 4

_TOP_LEVEL = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "metadata",
        "stop_sequences",
        "stream",
        "temperature",
        "top_p",
        "top_k",
        "thinking",
        "service_tier",
        "cache_control",
    }
)
_TOOL_FIELDS = frozenset(
    {
        "name",
        "description",
        "input_schema",
        "cache_control",
        "type",
        "strict",
        "input_examples",
        "allowed_callers",
        "defer_loading",
        "eager_input_streaming",
    }
)
_BLOCK_FIELDS = {
    "text": frozenset({"type", "text", "cache_control", "citations"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control", "caller"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
    "image": frozenset({"type", "source", "cache_control"}),
    "document": frozenset({"type", "source", "title", "context", "citations", "cache_control"}),
}
_USER_ONLY = frozenset({"tool_result", "image", "document"})
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


class InvalidRequest(Exception):
    """A body the Messages API refuses: 400 ``invalid_request_error`` unless told."""

    def __init__(self, message: str, *, status: int = 400, type: str = "invalid_request_error"):
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type


@dataclass(frozen=True)
class Block:
    """One piece of the prompt: what it is (``cache_control`` left out, so the same
    content always matches), its estimated tokens, and its cache breakpoint's lifetime
    (``None`` when it carries no ``cache_control``)."""

    identity: str
    tokens: int
    cache_ttl: str | None


@dataclass(frozen=True)
class Tool:
    """A tool the request declares."""

    name: str
    input_schema: JSON


@dataclass(frozen=True)
class MessagesRequest:
    """A Messages API body that passed validation."""

    model: str
    max_tokens: int
    tools: tuple[Tool, ...]
    tool_choice: JSON | None
    blocks: tuple[Block, ...]

    def tool(self, name: str) -> Tool | None:
        """The declared tool called ``name``."""
        return next((tool for tool in self.tools if tool.name == name), None)


def estimate_tokens(text: str) -> int:
    """The sandbox's token count for ``text``: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def canonical(value: Any) -> str:
    """``value`` as JSON in one fixed spelling, so equal content compares equal."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def read_body(body: bytes) -> JSON:
    """The body as a JSON object; raises :class:`InvalidRequest` when it is not one."""
    try:
        document = json.loads(body.decode("utf-8")) if body.strip() else None
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("There was an error parsing the body of your request.") from None
    if not isinstance(document, dict):
        raise InvalidRequest("The request body must be a JSON object.")
    return document


def validate(document: JSON, *, known_model: Callable[[str], bool]) -> MessagesRequest:
    """Check a ``POST /v1/messages`` body (``known_model(name)``: whether a model exists)
    and read its blocks; raises :class:`InvalidRequest`."""
    for name in document:
        if name not in _TOP_LEVEL:
            raise InvalidRequest(f"{name}: Extra inputs are not permitted")
    model = _model(document, known_model)
    max_tokens = _max_tokens(document)
    if document.get("stream"):
        raise InvalidRequest("stream: this sandbox answers whole messages only")
    tools, tool_blocks = _tools(document.get("tools"))
    tool_choice = _tool_choice(document.get("tool_choice"), tools)
    blocks = tool_blocks + _system(document.get("system")) + _messages(document.get("messages"))
    automatic = _cache_ttl(document, "")
    if automatic is not None and blocks[-1].cache_ttl is None:
        # Top-level cache_control puts the breakpoint on the last block.
        blocks[-1] = Block(blocks[-1].identity, blocks[-1].tokens, automatic)
    breakpoints = sum(1 for block in blocks if block.cache_ttl is not None)
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        raise InvalidRequest(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
            f"provided. Found {breakpoints}."
        )
    return MessagesRequest(model, max_tokens, tools, tool_choice, tuple(blocks))


def _model(document: JSON, known_model: Callable[[str], bool]) -> str:
    model = document.get("model")
    if model is None:
        raise InvalidRequest("model: Field required")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("model: Input should be a valid string")
    if not known_model(model):
        raise InvalidRequest(f"model: {model}", status=404, type="not_found_error")
    return model


def _max_tokens(document: JSON) -> int:
    max_tokens = document.get("max_tokens")
    if max_tokens is None:
        raise InvalidRequest("max_tokens: Field required")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InvalidRequest("max_tokens: Input should be a valid integer")
    if max_tokens < 0:
        raise InvalidRequest("max_tokens: Input should be greater than or equal to 0")
    return max_tokens


def _cache_ttl(block: JSON, where: str) -> str | None:
    control = block.get("cache_control")
    if control is None:
        return None
    field = f"{where}.cache_control" if where else "cache_control"
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise InvalidRequest(f"{field}.type: Input should be 'ephemeral'")
    ttl = control.get("ttl", "5m")
    if ttl not in CACHE_TTLS:
        raise InvalidRequest(f"{field}.ttl: Input should be '5m' or '1h'")
    return str(ttl)


def _tools(raw: Any) -> tuple[tuple[Tool, ...], list[Block]]:
    if raw is None:
        return (), []
    if not isinstance(raw, list):
        raise InvalidRequest("tools: Input should be a valid list")
    tools: list[Tool] = []
    blocks: list[Block] = []
    for index, spec in enumerate(raw):
        where = f"tools.{index}"
        if not isinstance(spec, dict):
            raise InvalidRequest(f"{where}: Input should be a valid dictionary")
        if spec.get("type", "custom") not in ("custom", None):
            raise InvalidRequest(f"{where}.type: this sandbox serves custom tools only")
        for name in spec:
            if name not in _TOOL_FIELDS:
                raise InvalidRequest(f"{where}.{name}: Extra inputs are not permitted")
        name = spec.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise InvalidRequest(
                f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        if any(tool.name == name for tool in tools):
            raise InvalidRequest(f"tools: Tool names must be unique. Found duplicate: {name}")
        schema = spec.get("input_schema")
        if not isinstance(schema, dict):
            raise InvalidRequest(f"{where}.input_schema: Field required")
        if schema.get("type") != "object":
            raise InvalidRequest(f"{where}.input_schema.type: Input should be 'object'")
        tools.append(Tool(name, schema))
        described = canonical(
            {"name": name, "description": spec.get("description", ""), "input_schema": schema}
        )
        blocks.append(
            Block(
                canonical(["tool", described]),
                estimate_tokens(described),
                _cache_ttl(spec, where),
            )
        )
    return tuple(tools), blocks


def _tool_choice(raw: Any, tools: tuple[Tool, ...]) -> JSON | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("type") not in ("auto", "any", "tool", "none"):
        raise InvalidRequest("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if raw["type"] in ("any", "tool") and not tools:
        raise InvalidRequest(
            "tool_choice: tool_choice may only be specified while providing tools."
        )
    if raw["type"] == "tool":
        name = raw.get("name")
        if not isinstance(name, str):
            raise InvalidRequest("tool_choice.tool.name: Field required")
        if all(tool.name != name for tool in tools):
            raise InvalidRequest(f"tool_choice.name: Tool '{name}' not found in provided tools")
    return dict(raw)


def _system(raw: Any) -> list[Block]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [Block(canonical(["system", raw]), estimate_tokens(raw), None)] if raw else []
    if not isinstance(raw, list):
        raise InvalidRequest("system: Input should be a valid string or list of text blocks")
    blocks = []
    for index, block in enumerate(raw):
        where = f"system.{index}"
        if not isinstance(block, dict) or block.get("type") != "text":
            raise InvalidRequest(f"{where}.type: Input should be 'text'")
        words = _text_of(block, where)
        blocks.append(
            Block(canonical(["system", words]), estimate_tokens(words), _cache_ttl(block, where))
        )
    return blocks


def _messages(raw: Any) -> list[Block]:
    if raw is None:
        raise InvalidRequest("messages: Field required")
    if not isinstance(raw, list) or not raw:
        raise InvalidRequest("messages: at least one message is required")
    blocks: list[Block] = []
    previous: str | None = None
    for index, message in enumerate(raw):
        where = f"messages.{index}"
        if not isinstance(message, dict):
            raise InvalidRequest(f"{where}: Input should be a valid dictionary")
        for name in message:
            if name not in ("role", "content"):
                raise InvalidRequest(f"{where}.{name}: Extra inputs are not permitted")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise InvalidRequest(f"{where}.role: Input should be 'user' or 'assistant'")
        if previous is None and role != "user":
            raise InvalidRequest('messages: first message must use the "user" role')
        if role == previous:
            raise InvalidRequest(
                'messages: roles must alternate between "user" and "assistant", but found '
                f'multiple "{role}" roles in a row'
            )
        previous = role
        blocks += _content(message.get("content"), index, str(role), where)
    return blocks


def _content(raw: Any, index: int, role: str, where: str) -> list[Block]:
    if isinstance(raw, str):
        if not raw:
            raise InvalidRequest(f"{where}: all messages must have non-empty content")
        identity = canonical(["message", index, role, {"type": "text", "text": raw}])
        return [Block(identity, estimate_tokens(raw), None)]
    if not isinstance(raw, list) or not raw:
        raise InvalidRequest(f"{where}: all messages must have non-empty content")
    blocks = []
    for position, block in enumerate(raw):
        place = f"{where}.content.{position}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in _BLOCK_FIELDS:
            raise InvalidRequest(f"{place}.type: unknown content block type {kind!r}")
        assert isinstance(block, dict)
        for name in block:
            if name not in _BLOCK_FIELDS[kind]:
                raise InvalidRequest(f"{place}.{name}: Extra inputs are not permitted")
        if kind in _USER_ONLY and role != "user":
            raise InvalidRequest(f"{place}: {kind} blocks may only appear in user messages")
        if kind == "tool_use" and role != "assistant":
            raise InvalidRequest(f"{place}: tool_use blocks may only appear in assistant messages")
        if kind == "text":
            counted = _text_of(block, place)
        else:
            counted = canonical({k: v for k, v in block.items() if k != "cache_control"})
        content = {k: v for k, v in block.items() if k != "cache_control"}
        blocks.append(
            Block(
                canonical(["message", index, role, content]),
                estimate_tokens(counted),
                _cache_ttl(block, place),
            )
        )
    return blocks


def _text_of(block: JSON, where: str) -> str:
    words = block.get("text")
    if not isinstance(words, str):
        raise InvalidRequest(f"{where}.text: Field required")
    if not words:
        raise InvalidRequest(f"{where}.text: text content blocks must be non-empty")
    return words
