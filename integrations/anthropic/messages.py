"""Claude through the Messages API: one forced tool call, on the real ``anthropic`` SDK.

Caseward gets structured output from Claude by offering exactly one tool and forcing it
(``tool_choice: {"type": "tool", "name": ...}``): the tool's input is the draft. This
module sends that request and reads the answer. It does not judge the draft: the input
comes back as the model gave it, even when it breaks the tool's schema, because
validating it is the caller's job.

The sequence of :func:`ask_with_tool`: take the client for (key, base URL, timeout,
retries) from a small cache (:func:`client`), so connections are reused; send the system
blocks (those marked cached with ``cache_control: {"type": "ephemeral"}``), the messages,
the one tool and the forced choice; the SDK retries 408, 409, 429, 5xx (529 included),
timeouts and dropped connections up to ``max_retries`` times, waiting as ``retry-after``
says; read the forced tool's input (``None`` when the model did not call it: it answered
in words, or refused, which is a stop reason and not an error), the text, the stop reason,
the usage and the request id. What still fails becomes :class:`ModelUnavailable` with one
reason.

Neither the API key nor the prompt reaches a log line or an exception's text here.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    # The SDK itself is imported where a request is made (see client()).
    import anthropic
    from anthropic.types import MessageParam, TextBlockParam

_log = logging.getLogger(__name__)

Reason = Literal[
    "rate_limited",
    "overloaded",
    "timeout",
    "connection",
    "refused_key",
    "bad_request",
    "server_error",
]

# How many distinct (key, base URL, timeout, retries) clients are kept open.
_CLIENTS_KEPT = 16


@dataclass(frozen=True)
class SystemBlock:
    """One block of the system prompt; ``cached`` puts a cache breakpoint after it."""

    text: str
    cached: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """The one tool the model is made to call: its input is the structured answer."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Tokens billed: input after the last cache breakpoint, output, and the prefix read
    from or written to the prompt cache (0 when the API leaves them out)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class ToolAnswer:
    """What the model answered.

    ``tool_input`` is the forced tool's input as the model gave it, not validated against
    the schema; ``None`` when the model did not call the tool (``stop_reason`` says why:
    ``end_turn`` for words instead, ``refusal``, ``max_tokens``)."""

    tool_input: dict[str, Any] | None
    stop_reason: str | None
    text: str
    usage: Usage
    model: str
    request_id: str | None


class ModelUnavailable(Exception):
    """Claude gave no answer, for one :data:`Reason`: ``rate_limited`` (429),
    ``overloaded`` (529), ``timeout``, ``connection`` (refused or dropped),
    ``refused_key`` (401/403), ``bad_request`` (another 4xx: the request must change),
    ``server_error`` (another 5xx). Retries the SDK makes come first; this is what is
    left when they are spent."""

    def __init__(
        self,
        reason: Reason,
        *,
        status: int | None = None,
        request_id: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        details = ", ".join(
            part
            for part in (
                f"HTTP {status}" if status is not None else "",
                f"request {request_id}" if request_id else "",
            )
            if part
        )
        super().__init__(f"Claude is unavailable: {reason}" + (f" ({details})" if details else ""))
        self.reason: Reason = reason
        self.status = status
        self.request_id = request_id
        self.retry_after_s = retry_after_s


def ask_with_tool(
    *,
    api_key: str,
    base_url: str | None,
    model: str,
    system: Sequence[SystemBlock],
    messages: list[dict[str, Any]],
    tool: ToolSpec,
    max_tokens: int,
    timeout_s: float,
    max_retries: int,
) -> ToolAnswer:
    """Ask ``model`` to call ``tool`` on ``messages`` under ``system``; ``base_url`` of
    ``None`` is Anthropic's own. Raises :class:`ModelUnavailable`."""
    import anthropic  # noqa: PLC0415  (loaded by client() below; see there)

    sdk = client(api_key, base_url, float(timeout_s), max_retries)
    try:
        message = sdk.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=[_system_block(block) for block in system],
            messages=cast("list[MessageParam]", messages),
            tools=[
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                }
            ],
            tool_choice={"type": "tool", "name": tool.name},
        )
    except anthropic.APIError as exc:
        unavailable = _unavailable(exc)
        _log.warning("Claude request failed: %s", unavailable)
        raise unavailable from None
    return _answer(message, tool.name)


@functools.lru_cache(maxsize=_CLIENTS_KEPT)
def client(
    api_key: str, base_url: str | None, timeout_s: float, max_retries: int
) -> anthropic.Anthropic:
    """The SDK's client for these settings, kept. The SDK is imported here, not with this
    module: loading its types takes seconds of a process's start (more than the rest of
    Caseward), which a process that never asks Claude (no key set) need not pay. One that
    will builds its client as it starts (``app.drafting.drafters.ClaudeDrafter``)."""
    import anthropic  # noqa: PLC0415

    return anthropic.Anthropic(
        api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
    )


def _system_block(block: SystemBlock) -> TextBlockParam:
    text: TextBlockParam = {"type": "text", "text": block.text}
    if block.cached:
        text["cache_control"] = {"type": "ephemeral"}
    return text


def _answer(message: anthropic.types.Message, tool_name: str) -> ToolAnswer:
    tool_input: dict[str, Any] | None = None
    words: list[str] = []
    for block in message.content:
        if block.type == "tool_use" and block.name == tool_name and tool_input is None:
            tool_input = dict(block.input)
        elif block.type == "text":
            words.append(block.text)
    usage = message.usage
    return ToolAnswer(
        tool_input=tool_input,
        stop_reason=message.stop_reason,
        text="".join(words),
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens or 0,
            cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        ),
        model=message.model,
        request_id=message._request_id,
    )


def _unavailable(exc: anthropic.APIError) -> ModelUnavailable:
    """The one reason an SDK error stands for; the API's own message is left out (it may
    quote the request)."""
    import anthropic  # noqa: PLC0415  (loaded by then: see client())

    # A timeout is a kind of connection error to the SDK, so it is asked about first.
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelUnavailable("timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return ModelUnavailable("connection")
    if not isinstance(exc, anthropic.APIStatusError):  # an answer the SDK could not read
        return ModelUnavailable("server_error")
    status = exc.status_code
    reason: Reason
    if status == 429:
        reason = "rate_limited"
    elif status == 529:
        reason = "overloaded"
    elif status in (401, 403):
        reason = "refused_key"
    elif status < 500:
        reason = "bad_request"
    else:
        reason = "server_error"
    return ModelUnavailable(
        reason,
        status=status,
        request_id=exc.request_id,
        retry_after_s=_seconds(exc.response.headers.get("retry-after")),
    )


def _seconds(header: str | None) -> float | None:
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None
