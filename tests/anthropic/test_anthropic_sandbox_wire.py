"""The sandbox on the wire: what the SDK and a plain HTTP client see, its checks of a
request, its script and its control routes."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
import requests
from anthropic.types import MessageParam
from anthropic_sandbox_support import DRAFT_TOOL, GOOD_DRAFT, MODEL, ask, assert_sdk_describes

from integrations.anthropic.messages import ModelUnavailable
from integrations.anthropic.sandbox import (
    DEMO_API_KEY,
    NOTHING_SCRIPTED,
    AnthropicSandbox,
    answers,
)

HELLO: list[MessageParam] = [{"role": "user", "content": "Hello"}]
TOOL_PARAM = {
    "name": DRAFT_TOOL.name,
    "description": DRAFT_TOOL.description,
    "input_schema": DRAFT_TOOL.input_schema,
}


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    """``POST /v1/messages`` without the SDK, with the demo key unless ``headers`` say."""
    sent = {"x-api-key": DEMO_API_KEY, "anthropic-version": "2023-06-01", **(headers or {})}
    return requests.post(f"{url}/v1/messages", json=body, headers=sent, timeout=5)


def client(url: str, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=DEMO_API_KEY, base_url=url, max_retries=options.pop("max_retries", 0), **options
    )


def test_a_message_is_what_the_sdk_describes(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(answers.tool_use(GOOD_DRAFT))
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "messages": HELLO,
        "tools": [TOOL_PARAM],
        "tool_choice": {"type": "tool", "name": DRAFT_TOOL.name},
    }

    answer = post(url, body)

    assert answer.status_code == 200
    raw = answer.json()
    assert_sdk_describes(raw)
    assert raw["id"].startswith("msg_")
    assert raw["content"][0]["id"].startswith("toolu_")
    assert raw["content"][0]["input"] == GOOD_DRAFT
    assert answer.headers["request-id"].startswith("req_")


def test_an_error_is_anthropic_s_envelope_with_its_request_id(url: str) -> None:
    answer = post(url, {"model": MODEL, "max_tokens": 10, "messages": HELLO}, {"x-api-key": "no"})

    assert answer.status_code == 401
    raw = answer.json()
    assert_sdk_describes(raw)
    assert raw["error"]["type"] == "authentication_error"
    assert raw["request_id"] == answer.headers["request-id"]


def test_the_sdk_reads_the_request_id_of_an_error(url: str) -> None:
    with pytest.raises(anthropic.AuthenticationError) as raised:
        anthropic.Anthropic(api_key="wrong", base_url=url, max_retries=0).messages.create(
            model=MODEL, max_tokens=10, messages=HELLO
        )

    assert raised.value.request_id is not None
    assert raised.value.type == "authentication_error"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"x-api-key": ""}, 401),
        ({"anthropic-version": ""}, 400),
        ({"anthropic-version": "yesterday"}, 400),
    ],
)
def test_headers_are_checked(url: str, headers: dict[str, str], status: int) -> None:
    answer = post(url, {"model": MODEL, "max_tokens": 10, "messages": HELLO}, headers)

    assert answer.status_code == status


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"max_tokens": 10, "messages": HELLO}, 400, "model: Field required"),
        ({"model": MODEL, "messages": HELLO}, 400, "max_tokens: Field required"),
        ({"model": "gpt-4o", "max_tokens": 10, "messages": HELLO}, 404, "model: gpt-4o"),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": [*HELLO, {"role": "user", "content": "Again"}],
            },
            400,
            "roles must alternate",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": [{"role": "assistant", "content": "Hi"}],
            },
            400,
            "first message must use the",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": HELLO,
                "tools": [TOOL_PARAM],
                "tool_choice": {"type": "tool", "name": "issue_refund"},
            },
            400,
            "Tool 'issue_refund' not found",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": HELLO,
                "tool_choice": {"type": "any"},
            },
            400,
            "while providing tools",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": HELLO,
                "tools": [TOOL_PARAM, TOOL_PARAM],
            },
            400,
            "Tool names must be unique",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "system": [
                    {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
                    for _ in range(5)
                ],
                "messages": HELLO,
            },
            400,
            "A maximum of 4 blocks with cache_control",
        ),
        ({"model": MODEL, "max_tokens": 10, "messages": HELLO, "temprature": 1}, 400, "Extra"),
    ],
    ids=[
        "no-model",
        "no-max-tokens",
        "unknown-model",
        "two-user-turns",
        "assistant-first",
        "undeclared-forced-tool",
        "tool-choice-without-tools",
        "duplicate-tool",
        "five-breakpoints",
        "unknown-field",
    ],
)
def test_bodies_are_checked_as_the_api_does(
    sandbox: AnthropicSandbox, url: str, body: dict[str, Any], status: int, says: str
) -> None:
    sandbox.set_default(answers.tool_use(GOOD_DRAFT))

    answer = post(url, body)

    assert answer.status_code == status
    assert says in answer.json()["error"]["message"]
    assert answer.json()["error"]["type"] == (
        "invalid_request_error" if status == 400 else "not_found_error"
    )


def test_nothing_scripted_is_said_in_words(url: str) -> None:
    message = client(url).messages.create(model=MODEL, max_tokens=10, messages=HELLO)

    assert message.stop_reason == "end_turn"
    assert message.content[0].type == "text"
    assert message.content[0].text == NOTHING_SCRIPTED


def test_the_default_answers_when_nothing_is_queued(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.set_default(answers.text("Default words."))
    sandbox.queue(answers.text("Queued words."))

    said = [ask(url).text for _ in range(3)]

    assert said == ["Queued words.", "Default words.", "Default words."]


def test_a_script_the_request_cannot_take_fails_at_once(
    sandbox: AnthropicSandbox, url: str
) -> None:
    """A scripted input that breaks the schema (or a 'malformed' one that fits it) is a
    mistake in the test: a 500 the SDK is told not to retry."""
    sandbox.queue(
        answers.tool_use({"summary": "No next step."}),
        answers.malformed_tool_input(GOOD_DRAFT),
    )

    for _ in range(2):
        with pytest.raises(ModelUnavailable) as raised:
            ask(url, max_retries=2)
        assert raised.value.reason == "server_error"

    assert [r.status for r in sandbox.received_requests()] == [500, 500]


def test_a_529_is_retried_by_the_sdk(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(
        answers.error(529, "overloaded_error", retry_after=0.05), answers.tool_use(GOOD_DRAFT)
    )

    answer = ask(url, max_retries=1)

    assert answer.tool_input == GOOD_DRAFT
    assert [r.status for r in sandbox.received_requests()] == [529, 200]


def test_max_tokens_zero_warms_the_cache_and_says_nothing(url: str) -> None:
    message = client(url).messages.create(model=MODEL, max_tokens=0, messages=HELLO)

    assert message.content == []
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 0


def test_control_routes_script_the_model_behind_the_token(
    sandbox: AnthropicSandbox, url: str
) -> None:
    script: dict[str, Any] = {
        "answers": [{"kind": "tool_use", "input": GOOD_DRAFT}, {"kind": "refusal"}]
    }
    token = {"Authorization": f"Bearer {sandbox.control_token}"}

    refused = requests.post(f"{url}/_sandbox/answers", json=script, timeout=5)
    queued = requests.post(f"{url}/_sandbox/answers", json=script, headers=token, timeout=5)
    first, second = ask(url), ask(url)
    bodies = requests.get(f"{url}/_sandbox/request_bodies", headers=token, timeout=5).json()

    assert refused.status_code == 401
    assert queued.json() == {"queued": 2}
    assert first.tool_input == GOOD_DRAFT
    assert second.stop_reason == "refusal"
    assert [body["tool_choice"]["name"] for body in bodies] == [DRAFT_TOOL.name] * 2


def test_a_bad_scripted_answer_is_refused_by_the_control_route(
    sandbox: AnthropicSandbox, url: str
) -> None:
    token = {"Authorization": f"Bearer {sandbox.control_token}"}
    script: dict[str, Any] = {"answers": [{"kind": "error", "status": 429, "type": "too_many"}]}

    answer = requests.post(f"{url}/_sandbox/answers", json=script, headers=token, timeout=5)

    assert answer.status_code == 400
    assert sandbox.pending_answers() == []
