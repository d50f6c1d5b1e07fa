"""Reading a staff API request body: one JSON object, its fields bounded as they are
stored (the limits themselves live in :mod:`app.validation`)."""

from __future__ import annotations

from typing import Any

from flask import request

from app.errors import InvalidInput
from app.validation import SHORT_TEXT, only_keys, text
from app.words import said


def json_body(*fields: str) -> dict[str, Any]:
    """The body as a JSON object; given ``fields``, holding no other key."""
    try:
        body = request.get_json(silent=True)
    except RecursionError:  # nesting deeper than the parser goes is not a request body
        body = None
    if not isinstance(body, dict):
        raise InvalidInput(said("the request body must be a JSON object"), field="body")
    if fields:
        only_keys(body, fields)
    return body


def text_field(
    body: dict[str, Any],
    name: str,
    *,
    required: bool = False,
    max_length: int = SHORT_TEXT,
    multiline: bool = False,
) -> str:
    """``body[name]`` as bounded text (see :func:`app.validation.text`); "" when absent."""
    value = text(
        body.get(name), name, max_length=max_length, required=required, multiline=multiline
    )
    return value or ""
