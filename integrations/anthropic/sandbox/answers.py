"""What the sandbox's "model" answers: scripted by tests, one answer per request.

A test queues answers (:meth:`Script.queue`); each request that passes authentication
and validation takes the next one, so a retry sent by the SDK takes the answer after the
one that failed. With nothing queued the :attr:`Script.default` answer is used, and
without one the sandbox says, in a text block, that nothing was scripted.

The answers:

``tool_use(input, name=None)``  the model calls a tool (the forced one unless named) with
                                ``input``, which must match the tool's ``input_schema``.
``text(words)``                 the model answers in words and calls no tool (``end_turn``).
``refusal()``                   the model declines (stop reason ``refusal``, no content).
``malformed_tool_input(raw)``   a tool call whose input does *not* match the schema, as a
                                model without strict tool use can produce.
``error(status, type, ...)``    an API error instead of a message (429 ``rate_limit_error``
                                with ``retry-after``, 529 ``overloaded_error``, 500
                                ``api_error``...).
``slow(seconds, then=...)``     wait ``seconds`` of wall time, then answer ``then`` (or the
                                default), so a client's timeout fires first.

Each has a JSON form (``{"kind": "tool_use", "input": {...}}``) for the control routes.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

# Anthropic's error types and the status each is sent with.
ERROR_STATUSES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


@dataclass(frozen=True)
class ToolUse:
    """The model calls a tool with an input matching its schema."""

    input: JSON
    name: str | None = None

    def to_json(self) -> JSON:
        """Control-route form."""
        return {"kind": "tool_use", "input": self.input, "name": self.name}


@dataclass(frozen=True)
class Text:
    """The model answers in words, calling no tool."""

    text: str

    def to_json(self) -> JSON:
        """Control-route form."""
        return {"kind": "text", "text": self.text}


@dataclass(frozen=True)
class Refusal:
    """The model declines to answer."""

    def to_json(self) -> JSON:
        """Control-route form."""
        return {"kind": "refusal"}


@dataclass(frozen=True)
class MalformedToolInput:
    """The model calls the tool with an input that does not match its schema."""

    raw: JSON
    name: str | None = None

    def to_json(self) -> JSON:
        """Control-route form."""
        return {"kind": "malformed_tool_input", "raw": self.raw, "name": self.name}


@dataclass(frozen=True)
class ApiError:
    """An error answer instead of a message."""

    status: int
    type: str
    retry_after: float | None = None
    message: str | None = None

    def to_json(self) -> JSON:
        """Control-route form."""
        return {
            "kind": "error",
            "status": self.status,
            "type": self.type,
            "retry_after": self.retry_after,
            "message": self.message,
        }


@dataclass(frozen=True)
class Slow:
    """An answer given only after ``seconds`` of wall time (``then=None``: the default)."""

    seconds: float
    then: Answer | None = None

    def to_json(self) -> JSON:
        """Control-route form."""
        return {
            "kind": "slow",
            "seconds": self.seconds,
            "then": self.then.to_json() if self.then is not None else None,
        }


Answer = ToolUse | Text | Refusal | MalformedToolInput | ApiError | Slow


def tool_use(input: JSON, name: str | None = None) -> ToolUse:
    """The model calls ``name`` (default: the forced tool, else the first declared)."""
    if not isinstance(input, dict):
        raise TypeError("a tool's input is a JSON object")
    return ToolUse(input, name)


def text(words: str) -> Text:
    """The model answers ``words`` and stops (``end_turn``)."""
    if not isinstance(words, str) or not words:
        raise ValueError("a text answer needs some words")
    return Text(words)


def refusal() -> Refusal:
    """The model refuses (stop reason ``refusal``)."""
    return Refusal()


def malformed_tool_input(raw: JSON, name: str | None = None) -> MalformedToolInput:
    """The model calls the tool with ``raw``, which must *not* match its schema."""
    if not isinstance(raw, dict):
        raise TypeError("a tool's input is a JSON object, even a malformed one")
    return MalformedToolInput(raw, name)


def error(
    status: int, type: str, retry_after: float | None = None, message: str | None = None
) -> ApiError:
    """An API error: ``status`` with Anthropic's error ``type`` (and ``retry-after``)."""
    if type not in ERROR_STATUSES:
        raise ValueError(f"unknown error type {type!r}; expected one of {sorted(ERROR_STATUSES)}")
    if not 400 <= status <= 599:
        raise ValueError("an error answer has a 4xx or 5xx status")
    if retry_after is not None and retry_after < 0:
        raise ValueError("retry_after must not be negative")
    return ApiError(status, type, retry_after, message)


def slow(seconds: float, then: Answer | None = None) -> Slow:
    """Answer ``then`` after ``seconds`` of wall time."""
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    if isinstance(then, Slow):
        raise ValueError("a slow answer is followed by an answer, not another wait")
    return Slow(float(seconds), then)


def from_json(body: Any) -> Answer:
    """An answer from its control-route form, refusing unknown kinds and fields."""
    if not isinstance(body, dict):
        raise ValueError("an answer is a JSON object with a kind")
    fields = dict(body)
    kind = fields.pop("kind", None)
    allowed = {
        "tool_use": {"input", "name"},
        "text": {"text"},
        "refusal": set(),
        "malformed_tool_input": {"raw", "name"},
        "error": {"status", "type", "retry_after", "message"},
        "slow": {"seconds", "then"},
    }
    if kind not in allowed:
        raise ValueError(f"unknown answer kind {kind!r}; expected one of {sorted(allowed)}")
    unknown = set(fields) - allowed[kind]
    if unknown:
        raise ValueError(f"unknown fields for a {kind} answer: {sorted(unknown)}")
    if kind == "tool_use":
        return tool_use(fields["input"], fields.get("name"))
    if kind == "text":
        return text(fields["text"])
    if kind == "refusal":
        return refusal()
    if kind == "malformed_tool_input":
        return malformed_tool_input(fields["raw"], fields.get("name"))
    if kind == "error":
        retry_after = fields.get("retry_after")
        return error(
            int(fields["status"]),
            str(fields["type"]),
            float(retry_after) if retry_after is not None else None,
            fields.get("message"),
        )
    then = fields.get("then")
    return slow(float(fields["seconds"]), from_json(then) if then is not None else None)


class Script:
    """Answers queued for the coming requests, and the answer when none is queued."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: deque[Answer] = deque()
        self._default: Answer | None = None

    def queue(self, *answers: Answer) -> int:
        """Add ``answers`` after those already queued; returns how many are queued."""
        with self._lock:
            self._queued.extend(answers)
            return len(self._queued)

    def take(self) -> Answer | None:
        """The next queued answer, else the default (``None`` when neither is set)."""
        with self._lock:
            return self._queued.popleft() if self._queued else self._default

    def pending(self) -> list[Answer]:
        """The answers still queued, in order."""
        with self._lock:
            return list(self._queued)

    @property
    def default(self) -> Answer | None:
        """The answer given when nothing is queued."""
        with self._lock:
            return self._default

    @default.setter
    def default(self, answer: Answer | None) -> None:
        with self._lock:
            self._default = answer

    def clear(self) -> None:
        """Forget the queued answers and the default."""
        with self._lock:
            self._queued.clear()
            self._default = None
