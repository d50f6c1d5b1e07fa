"""``ask_with_tool`` on the real SDK against the sandbox: every kind of answer Claude can
give a forced-tool request, and every way it can fail to give one."""

from __future__ import annotations

import logging

import pytest
from anthropic_sandbox_support import (
    CUSTOMER_SAYS,
    DRAFT_TOOL,
    GOOD_DRAFT,
    LONG_POLICY,
    MODEL,
    ask,
)

from integrations.anthropic.messages import ModelUnavailable, SystemBlock
from integrations.anthropic.sandbox import DEMO_API_KEY, AnthropicSandbox, answers


def statuses(sandbox: AnthropicSandbox) -> list[int | None]:
    return [request.status for request in sandbox.received_requests()]


def test_the_forced_tool_input_is_the_answer(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(answers.tool_use(GOOD_DRAFT))

    answer = ask(url)

    assert answer.tool_input == GOOD_DRAFT
    assert answer.stop_reason == "tool_use"
    assert answer.model == MODEL
    assert answer.request_id is not None and answer.request_id.startswith("req_")
    assert answer.usage.output_tokens > 0


def test_the_model_is_sent_the_tool_forced_and_only_marked_blocks_cached(
    sandbox: AnthropicSandbox, url: str
) -> None:
    sandbox.queue(answers.tool_use(GOOD_DRAFT))

    ask(url, system=[SystemBlock(LONG_POLICY, cached=True), SystemBlock("Today: Tuesday.")])

    [sent] = sandbox.request_bodies()
    assert sent["system"] == [
        {"type": "text", "text": LONG_POLICY, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Today: Tuesday."},
    ]
    assert sent["tools"] == [
        {
            "name": DRAFT_TOOL.name,
            "description": DRAFT_TOOL.description,
            "input_schema": DRAFT_TOOL.input_schema,
        }
    ]
    assert sent["tool_choice"] == {"type": "tool", "name": DRAFT_TOOL.name}
    assert sent["messages"] == [{"role": "user", "content": CUSTOMER_SAYS}]
    assert sent["model"] == MODEL


def test_a_refusal_is_an_answer_without_a_tool_input(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(answers.refusal())

    answer = ask(url)

    assert answer.tool_input is None
    assert answer.stop_reason == "refusal"


def test_words_instead_of_the_tool_leave_no_tool_input(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(answers.text("I would need the order number first."))

    answer = ask(url)

    assert answer.tool_input is None
    assert answer.stop_reason == "end_turn"
    assert answer.text == "I would need the order number first."


def test_an_input_breaking_the_schema_comes_back_as_given(
    sandbox: AnthropicSandbox, url: str
) -> None:
    """Validation is the caller's job: the wrapper hands over what the model said."""
    malformed = {"summary": "", "next_step": "give everything away", "extra": True}
    sandbox.queue(answers.malformed_tool_input(malformed))

    answer = ask(url)

    assert answer.tool_input == malformed
    assert answer.stop_reason == "tool_use"


def test_a_429_is_retried_after_retry_after_then_answered(
    sandbox: AnthropicSandbox, url: str
) -> None:
    sandbox.queue(
        answers.error(429, "rate_limit_error", retry_after=0.05), answers.tool_use(GOOD_DRAFT)
    )

    answer = ask(url, max_retries=2)

    assert answer.tool_input == GOOD_DRAFT
    assert statuses(sandbox) == [429, 200]


def test_429s_past_the_retries_are_rate_limited(sandbox: AnthropicSandbox, url: str) -> None:
    limited = answers.error(429, "rate_limit_error", retry_after=0.05)
    sandbox.queue(limited, limited)

    with pytest.raises(ModelUnavailable) as raised:
        ask(url, max_retries=1)

    assert raised.value.reason == "rate_limited"
    assert raised.value.status == 429
    assert raised.value.retry_after_s == 0.05
    assert statuses(sandbox) == [429, 429]


def test_a_529_is_overloaded(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(answers.error(529, "overloaded_error"))

    with pytest.raises(ModelUnavailable) as raised:
        ask(url)

    assert raised.value.reason == "overloaded"
    assert raised.value.request_id is not None


def test_a_500_is_a_server_error(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.queue(answers.error(500, "api_error"))

    with pytest.raises(ModelUnavailable) as raised:
        ask(url)

    assert raised.value.reason == "server_error"


def test_an_answer_slower_than_the_timeout_is_a_timeout(
    sandbox: AnthropicSandbox, url: str
) -> None:
    sandbox.queue(answers.slow(30, then=answers.tool_use(GOOD_DRAFT)))

    with pytest.raises(ModelUnavailable) as raised:
        ask(url, timeout_s=0.2)

    assert raised.value.reason == "timeout"


def test_a_dropped_connection_is_a_connection_failure(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.arm_fault("drop_before_commit")

    with pytest.raises(ModelUnavailable) as raised:
        ask(url)

    assert raised.value.reason == "connection"


def test_a_wrong_key_is_refused_and_not_retried(sandbox: AnthropicSandbox, url: str) -> None:
    with pytest.raises(ModelUnavailable) as raised:
        ask(url, api_key="sk-ant-api03-not-a-key-we-issued", max_retries=2)

    assert raised.value.reason == "refused_key"
    assert raised.value.status == 401
    assert statuses(sandbox) == [401]


def test_a_request_the_api_refuses_is_a_bad_request(sandbox: AnthropicSandbox, url: str) -> None:
    with pytest.raises(ModelUnavailable) as raised:
        ask(url, messages=[{"role": "assistant", "content": "Hello"}])

    assert raised.value.reason == "bad_request"
    assert raised.value.status == 400


def test_neither_the_key_nor_the_prompt_is_told(
    sandbox: AnthropicSandbox, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="integrations.anthropic")
    wrong_key = "sk-ant-api03-a-key-that-must-stay-secret"

    with pytest.raises(ModelUnavailable) as raised:
        ask(url, api_key=wrong_key)

    told = str(raised.value) + "".join(record.getMessage() for record in caplog.records)
    assert "refused_key" in told
    assert wrong_key not in told
    assert DEMO_API_KEY not in told
    assert CUSTOMER_SAYS not in told
