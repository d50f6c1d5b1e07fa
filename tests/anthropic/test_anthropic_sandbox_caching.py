"""The sandbox's prompt cache, seen as Caseward sees it: the usage ``ask_with_tool`` reports.

Tokens are the sandbox's estimate, four characters to a token rounded up, so a test can
say how many the customer's words are.
"""

from __future__ import annotations

import math

import anthropic
from anthropic_sandbox_support import CUSTOMER_SAYS, GOOD_DRAFT, LONG_POLICY, MODEL, ask

from integrations.anthropic.messages import SystemBlock
from integrations.anthropic.sandbox import (
    DEMO_API_KEY,
    MIN_CACHEABLE_TOKENS,
    AnthropicSandbox,
    answers,
)

CACHED_POLICY = [SystemBlock(LONG_POLICY, cached=True)]
WORDS_TOKENS = math.ceil(len(CUSTOMER_SAYS) / 4)


def test_a_long_cached_prefix_is_written_once_then_read(
    sandbox: AnthropicSandbox, url: str
) -> None:
    first = ask(url, system=CACHED_POLICY).usage
    second = ask(url, system=CACHED_POLICY).usage

    assert first.cache_creation_input_tokens >= math.ceil(len(LONG_POLICY) / 4)
    assert first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    # What follows the breakpoint, the customer's words, is all that is billed as input.
    assert first.input_tokens == second.input_tokens == WORDS_TOKENS


def test_a_short_cached_prefix_is_not_cached(sandbox: AnthropicSandbox, url: str) -> None:
    short = [SystemBlock("You draft support cases.", cached=True)]

    first = ask(url, system=short).usage
    second = ask(url, system=short).usage

    for usage in (first, second):
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0
        assert WORDS_TOKENS < usage.input_tokens < MIN_CACHEABLE_TOKENS


def test_an_expired_prefix_is_written_again(sandbox: AnthropicSandbox, url: str) -> None:
    written = ask(url, system=CACHED_POLICY).usage
    sandbox.advance_clock(6 * 60)

    again = ask(url, system=CACHED_POLICY).usage

    assert again.cache_read_input_tokens == 0
    assert again.cache_creation_input_tokens == written.cache_creation_input_tokens


def test_reading_a_prefix_keeps_it_for_five_more_minutes(
    sandbox: AnthropicSandbox, url: str
) -> None:
    ask(url, system=CACHED_POLICY)
    sandbox.advance_clock(4 * 60)
    ask(url, system=CACHED_POLICY)
    sandbox.advance_clock(4 * 60)  # eight minutes after writing, four after reading

    usage = ask(url, system=CACHED_POLICY).usage

    assert usage.cache_read_input_tokens > 0
    assert usage.cache_creation_input_tokens == 0


def test_a_changed_prefix_is_not_read(sandbox: AnthropicSandbox, url: str) -> None:
    ask(url, system=CACHED_POLICY)

    usage = ask(url, system=[SystemBlock(LONG_POLICY + " Also on Sundays.", cached=True)]).usage

    assert usage.cache_read_input_tokens == 0
    assert usage.cache_creation_input_tokens > 0


def test_the_longest_cached_prefix_is_read_and_the_rest_written(
    sandbox: AnthropicSandbox, url: str
) -> None:
    client = anthropic.Anthropic(api_key=DEMO_API_KEY, base_url=url, max_retries=0)
    system = [{"type": "text", "text": LONG_POLICY, "cache_control": {"type": "ephemeral"}}]

    def turn(words: str) -> anthropic.types.Usage:
        return client.messages.create(
            model=MODEL,
            max_tokens=256,
            system=system,  # type: ignore[arg-type]
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": words, "cache_control": {"type": "ephemeral"}}
                    ],
                }
            ],
        ).usage

    policy_only = turn(CUSTOMER_SAYS)
    other_words = "Where is my order? " * 10
    usage = turn(other_words)

    # The policy prefix is read; the new words after it are written, and nothing follows
    # the last breakpoint.
    assert usage.cache_read_input_tokens == math.ceil(len(LONG_POLICY) / 4)
    assert usage.cache_creation_input_tokens == math.ceil(len(other_words) / 4)
    assert usage.input_tokens == 0
    assert policy_only.cache_creation_input_tokens == usage.cache_read_input_tokens + WORDS_TOKENS


def test_each_key_has_its_own_cache(sandbox: AnthropicSandbox, url: str) -> None:
    sandbox.accept_key("sk-ant-api03-another-organization")
    ask(url, system=CACHED_POLICY)

    usage = ask(url, system=CACHED_POLICY, api_key="sk-ant-api03-another-organization").usage

    assert usage.cache_read_input_tokens == 0


def test_a_tool_answer_reads_the_cache_too(sandbox: AnthropicSandbox, url: str) -> None:
    ask(url, system=CACHED_POLICY)
    sandbox.queue(answers.tool_use(GOOD_DRAFT))

    answer = ask(url, system=CACHED_POLICY)

    assert answer.tool_input == GOOD_DRAFT
    assert answer.usage.cache_read_input_tokens > 0


def test_top_level_cache_control_caches_up_to_the_last_block(
    sandbox: AnthropicSandbox, url: str
) -> None:
    client = anthropic.Anthropic(api_key=DEMO_API_KEY, base_url=url, max_retries=0)

    def usage() -> anthropic.types.Usage:
        return client.messages.create(
            model=MODEL,
            max_tokens=256,
            cache_control={"type": "ephemeral"},
            system=LONG_POLICY,
            messages=[{"role": "user", "content": CUSTOMER_SAYS}],
        ).usage

    first, second = usage(), usage()

    assert first.cache_creation_input_tokens == second.cache_read_input_tokens > 0
    assert second.input_tokens == 0
