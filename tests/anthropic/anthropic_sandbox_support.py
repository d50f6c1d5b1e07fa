"""Helpers for the Anthropic tests: a forced-tool request against the sandbox, and the
check that an answer holds nothing the SDK's own types do not describe."""

from __future__ import annotations

from typing import Any

import anthropic
from pydantic import BaseModel

from integrations.anthropic.messages import SystemBlock, ToolAnswer, ToolSpec, ask_with_tool
from integrations.anthropic.sandbox import DEMO_API_KEY

START = 1_700_000_000.0
MODEL = "claude-sonnet-4-5"

DRAFT_TOOL = ToolSpec(
    name="draft_case",
    description="Draft the case: a summary and the next step.",
    input_schema={
        "type": "object",
        "properties": {
            "summary": {"type": "string", "minLength": 1},
            "next_step": {"type": "string", "enum": ["refund", "reply", "escalate"]},
            "amount_minor": {"type": "integer", "minimum": 0},
        },
        "required": ["summary", "next_step"],
        "additionalProperties": False,
    },
)
GOOD_DRAFT = {"summary": "Parcel arrived damaged.", "next_step": "refund", "amount_minor": 2500}
# Long enough (about 1,500 tokens at four characters each) for the prompt cache.
LONG_POLICY = "Refunds follow the shop's written policy. " * 143
CUSTOMER_SAYS = "My parcel arrived crushed, can I get my money back?"


def ask(url: str, **overrides: Any) -> ToolAnswer:
    """``ask_with_tool`` against the sandbox at ``url``: one short system block, the
    customer's words, the draft tool, no retries, unless ``overrides`` say otherwise."""
    arguments: dict[str, Any] = {
        "api_key": DEMO_API_KEY,
        "base_url": url,
        "model": MODEL,
        "system": [SystemBlock("You draft support cases.")],
        "messages": [{"role": "user", "content": CUSTOMER_SAYS}],
        "tool": DRAFT_TOOL,
        "max_tokens": 1024,
        "timeout_s": 5.0,
        "max_retries": 0,
    }
    arguments.update(overrides)
    return ask_with_tool(**arguments)


def unknown_fields(model: Any, where: str = "") -> list[str]:
    """Every field of ``model`` (and the models inside it) that its SDK type does not
    declare: the SDK keeps those as extras instead of refusing them."""
    found: list[str] = []
    if isinstance(model, BaseModel):
        found += [f"{where}.{name}" for name in (model.model_extra or {})]
        for name in type(model).model_fields:
            found += unknown_fields(getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        for index, item in enumerate(model):
            found += unknown_fields(item, f"{where}[{index}]")
    return found


def assert_sdk_describes(raw: dict[str, Any]) -> None:
    """``raw`` validates strictly as the SDK's Message (a 200) or ErrorResponse, with no
    field the SDK does not know."""
    kind = (
        anthropic.types.Message if raw.get("type") == "message" else anthropic.types.ErrorResponse
    )
    parsed = kind.model_validate(raw, strict=True)
    assert unknown_fields(parsed) == [], raw
