"""Gorgias' template variables: ``{{ticket.id}}``, ``{{ticket.messages[-1].body_text}}``.

An HTTP integration's URL and body name values of the event's ticket and message as
dotted paths with list indices (negative ones count from the end). A value the event
does not have renders as nothing.

A body is JSON text, so each value goes in as the inside of a JSON string (quotes,
backslashes and control characters escaped): a customer who writes ``"`` cannot break
the document or add a field to it. Numbers and booleans look the same that way, so
``{{ticket.id}}`` may stand quoted or bare. In a URL each value is percent-encoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

_VARIABLE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_STEP = re.compile(r"\.?([A-Za-z_]\w*)|\[(-?\d+)\]")


def lookup(context: Mapping[str, Any], path: str) -> Any:
    """The value at ``path`` (``ticket.messages[-1].id``) in ``context``, or ``None``."""
    if not path or path.startswith("."):
        return None
    value: Any = context
    position = 0
    while position < len(path):
        step = _STEP.match(path, position)
        if step is None:
            return None
        position = step.end()
        name, index = step.group(1), step.group(2)
        if name is not None:
            value = value.get(name) if isinstance(value, Mapping) else None
        else:
            at = int(index)
            value = (
                value[at] if isinstance(value, list) and -len(value) <= at < len(value) else None
            )
        if value is None:
            return None
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _json_string_inside(value: Any) -> str:
    return json.dumps(_as_text(value))[1:-1]


def _url_part(value: Any) -> str:
    return quote(_as_text(value), safe="")


def _render(template: str, context: Mapping[str, Any], encode: Callable[[Any], str]) -> str:
    return _VARIABLE.sub(lambda found: encode(lookup(context, found.group(1))), template)


def render_body(template: str, context: Mapping[str, Any]) -> str:
    """``template`` with every variable replaced by its JSON-escaped value."""
    return _render(template, context, _json_string_inside)


def render_url(template: str, context: Mapping[str, Any]) -> str:
    """``template`` with every variable replaced by its percent-encoded value."""
    return _render(template, context, _url_part)
