"""The Messages API's answers as bytes: Message objects, error envelopes, ids, headers.

Every answer carries ``request-id`` (the SDK puts it on the message and on its
exceptions) and JSON. A Message has ``id`` (``msg_...``), ``type``, ``role``, ``model``,
``content`` blocks, ``stop_reason``, ``stop_sequence``, ``stop_details`` and ``usage``;
an error is ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with the
status the SDK maps to its exception classes (429 ``RateLimitError``, 529
``OverloadedError``...).
"""

from __future__ import annotations

import json
import secrets
import string
from typing import Any

from integrations.sandbox_kit import Response

from .caching import CacheUsage

JSON = dict[str, Any]

_ALPHABET = string.digits + string.ascii_letters

# What Anthropic says for each error type when the script gives no message.
DEFAULT_MESSAGES = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "rate_limit_error": "This request would exceed the rate limit for your organization.",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}


def new_id(prefix: str) -> str:
    """An id in Anthropic's shape: ``msg_01`` followed by 22 random characters."""
    return f"{prefix}_01" + "".join(secrets.choice(_ALPHABET) for _ in range(22))


def encode(body: JSON) -> bytes:
    """A JSON answer's bytes."""
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def headers_for(request_id: str) -> dict[str, str]:
    """The headers every answer carries."""
    return {"Content-Type": "application/json", "request-id": request_id}


def error_response(
    status: int,
    type: str,
    request_id: str,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> Response:
    """An error envelope; ``retry_after`` adds ``retry-after`` (Anthropic sends whole
    seconds; a fraction is allowed here so tests of retries stay quick), ``should_retry``
    the SDK's ``x-should-retry`` hint."""
    body = {
        "type": "error",
        "error": {"type": type, "message": message or DEFAULT_MESSAGES.get(type, type)},
        "request_id": request_id,
    }
    headers = headers_for(request_id)
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    return Response(status, encode(body), headers)


def usage_json(cache: CacheUsage, output_tokens: int) -> JSON:
    """The ``usage`` object."""
    return {
        "input_tokens": cache.input_tokens,
        "cache_creation_input_tokens": cache.cache_creation_input_tokens,
        "cache_read_input_tokens": cache.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.ephemeral_5m_input_tokens,
            "ephemeral_1h_input_tokens": cache.ephemeral_1h_input_tokens,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def message_json(
    *,
    model: str,
    content: list[JSON],
    stop_reason: str,
    usage: JSON,
    stop_details: JSON | None = None,
) -> JSON:
    """A Message object."""
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": stop_details,
        "usage": usage,
    }
