"""Fixtures for the Anthropic tests: one served sandbox per test module on a frozen clock,
its script and cache forgotten before each test.

Every answer the sandbox gives during a module is checked afterwards against the SDK's
own types, strictly and with no field the SDK does not declare, so no shape escapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from anthropic_sandbox_support import START, assert_sdk_describes

from integrations.anthropic.sandbox import AnthropicSandbox, Clock


@pytest.fixture(scope="module")
def served() -> Iterator[AnthropicSandbox]:
    """The module's sandbox, serving on a free port."""
    box = AnthropicSandbox(clock=Clock(start=START))
    answers: list[bytes] = []
    serve = box.handle_api

    def recording(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        response = serve(method, target, headers, body)
        if not response.drop:
            answers.append(response.body)
        return response

    box.handle_api = recording  # type: ignore[method-assign]
    box.start()
    yield box
    box.stop()
    for raw in answers:
        assert_sdk_describes(json.loads(raw))


@pytest.fixture
def sandbox(served: AnthropicSandbox) -> Iterator[AnthropicSandbox]:
    """The module's sandbox with nothing scripted, cached or received."""
    served.reset()
    yield served
    served.reset()


@pytest.fixture
def url(sandbox: AnthropicSandbox) -> str:
    assert sandbox.url is not None
    return sandbox.url
