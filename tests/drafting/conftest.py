"""Fixtures for the drafting tests: one served Anthropic sandbox per test module, on a
frozen clock, with its script, prompt cache and requests forgotten before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from drafting_support import START, claude_drafter

from app.drafting.drafters import ClaudeDrafter
from integrations.anthropic.sandbox import AnthropicSandbox, Clock


@pytest.fixture(scope="module")
def served_claude() -> Iterator[AnthropicSandbox]:
    box = AnthropicSandbox(clock=Clock(start=START))
    box.start()
    yield box
    box.stop()


@pytest.fixture
def claude_api(served_claude: AnthropicSandbox) -> Iterator[AnthropicSandbox]:
    """The module's sandbox with nothing scripted, cached or received."""
    served_claude.reset()
    yield served_claude
    served_claude.reset()


@pytest.fixture
def claude_url(claude_api: AnthropicSandbox) -> str:
    assert claude_api.url is not None
    return claude_api.url


@pytest.fixture
def drafter(claude_url: str) -> ClaudeDrafter:
    """Claude at the sandbox, no retries, a five-second timeout."""
    return claude_drafter(claude_url)
