"""A local Messages API that the unmodified ``anthropic`` SDK cannot tell from the real one.

Caseward drafts cases with Claude through a forced tool; what matters to it is what the
model is sent (system blocks, prompt caching, the forced tool) and what it does with
every kind of answer: a tool call, words instead, a refusal, an input that breaks the
schema, a 429 or a 529, an answer slower than its timeout. The sandbox answers from a
script the test writes, caches prompts as Anthropic does (on the sandbox clock), and
keeps every request body.

In-process::

    sandbox = AnthropicSandbox(clock=Clock(start=1_700_000_000))
    handle = sandbox.start()                      # handle.url, handle.stop()
    sandbox.queue(answers.error(429, "rate_limit_error", retry_after=1),
                  answers.tool_use({"summary": "..."}))
    client = anthropic.Anthropic(api_key=DEMO_API_KEY, base_url=handle.url)
    sandbox.request_bodies()                      # what the model was sent
    sandbox.received_requests()                   # every request and its status

As a process: ``python -m integrations.anthropic.sandbox --port 12113``.

The clock, HTTP server, faults and holds and the received-request log are the shared
:mod:`integrations.sandbox_kit`; everything Anthropic-shaped (the Message object, errors,
validation, prompt caching) is here.
"""

from integrations.sandbox_kit import FAULT_HEADER, Clock, ReceivedRequest, SandboxHandle

from . import answers
from .caching import MIN_CACHEABLE_TOKENS
from .sandbox import DEMO_API_KEY, NOTHING_SCRIPTED, AnthropicSandbox

__all__ = [
    "DEMO_API_KEY",
    "FAULT_HEADER",
    "MIN_CACHEABLE_TOKENS",
    "NOTHING_SCRIPTED",
    "AnthropicSandbox",
    "Clock",
    "ReceivedRequest",
    "SandboxHandle",
    "answers",
]
