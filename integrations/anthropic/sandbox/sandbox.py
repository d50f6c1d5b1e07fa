"""The sandbox as an object: API keys, the script, the prompt cache, the bodies received.

:class:`AnthropicSandbox` serves ``POST /v1/messages`` as Anthropic does; serving over
HTTP, time, faults, holds, latency and the request log come from the shared kit's
:class:`~integrations.sandbox_kit.SandboxBase`. Every control the ``/_sandbox/`` routes
offer is a method here too, so in-process tests steer the sandbox without HTTP.

The sequence of one request (:meth:`AnthropicSandbox.handle_api`): record its arrival;
only ``POST /v1/messages`` exists (else 404 ``not_found_error``); authenticate the key
(``x-api-key``, or ``Authorization: Bearer`` as the SDK sends it; else 401
``authentication_error``); check ``anthropic-version``; keep the body; validate it (400
``invalid_request_error``, 404 for an unknown model); ask the fault board for the
request's plan (drop, 500, hold, delay); take the next scripted answer, waiting first if
it is slow; answer it (an error envelope, or a Message whose usage comes from the prompt
cache); let after-answer faults drop or spoil it; record the answer.

Unlike the kit's request log, which never keeps bodies, this sandbox keeps what each
request sent (:meth:`AnthropicSandbox.request_bodies`): what the model was asked is what
tests of a model integration assert.
"""

from __future__ import annotations

import copy
import hmac
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from integrations.sandbox_kit import (
    FAULT_HEADER,
    Clock,
    Dispatch,
    Fault,
    NoDeliveries,
    Response,
    SandboxBase,
)

from . import schema
from .answers import (
    Answer,
    ApiError,
    MalformedToolInput,
    Refusal,
    Script,
    Slow,
    Text,
    ToolUse,
)
from .caching import MIN_CACHEABLE_TOKENS, PromptCache
from .control import anthropic_control_router
from .validation import (
    InvalidRequest,
    MessagesRequest,
    canonical,
    estimate_tokens,
    read_body,
    validate,
)
from .wire import encode, error_response, headers_for, message_json, new_id, usage_json

log = logging.getLogger(__name__)

JSON = dict[str, Any]

# A fixed, public demo key: the offline demo is configured with it.
DEMO_API_KEY = "sk-ant-api03-caseward-sandbox-demo-key"
NOTHING_SCRIPTED = (
    "The Anthropic sandbox has no answer scripted for this request: queue one, or set a "
    "default answer."
)
# How many request bodies are kept (the oldest are forgotten first).
BODIES_KEPT = 1000

_VERSION = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def known_model(name: str) -> bool:
    """The sandbox serves every Claude model name."""
    return name.startswith("claude-")


def _presented_key(headers: Mapping[str, str]) -> str | None:
    key = headers.get("X-Api-Key")
    if key:
        return key
    scheme, _, credential = (headers.get("Authorization") or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credential.strip() or None


def _version_problem(version: str | None) -> str | None:
    if not version:
        return "anthropic-version: header is required"
    match = _VERSION.match(version)
    try:
        if match is None:
            raise ValueError(version)
        date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return f"anthropic-version: invalid version {version!r}"
    return None


class AnthropicSandbox(SandboxBase):
    """A local Messages API that the real ``anthropic`` SDK can talk to."""

    serving_name = "anthropic-sandbox"

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        control_token: str | None = None,
        api_keys: Iterable[str] = (DEMO_API_KEY,),
        min_cacheable_tokens: int = MIN_CACHEABLE_TOKENS,
        background_interval: float = 0.25,
    ) -> None:
        super().__init__(
            clock=clock, control_token=control_token, background_interval=background_interval
        )
        self.script = Script()
        self.cache = PromptCache(min_cacheable_tokens)
        self._keys_lock = threading.Lock()
        self._api_keys = set(api_keys)
        self._bodies: deque[JSON] = deque(maxlen=BODIES_KEPT)
        self._bodies_lock = threading.Lock()
        # Set to let every slow answer waiting now go; replaced so later ones wait again.
        self._wake = threading.Event()
        self._wake_lock = threading.Lock()
        self._no_webhooks = NoDeliveries()

    # -- serving ---------------------------------------------------------------------------

    def _control(self) -> Dispatch:
        return anthropic_control_router(self).handle

    def _failure(self) -> Response:
        """Anthropic's answer when the sandbox itself fails: a 500 ``api_error``."""
        return error_response(500, "api_error", new_id("req"))

    @property
    def _deliveries(self) -> NoDeliveries:
        return self._no_webhooks

    def process_due(self) -> int:
        """Nothing happens later in this sandbox (cache entries expire when looked up)."""
        return 0

    def stop(self) -> None:
        """Stop serving, and let slow answers still waiting go (their connections drop)."""
        self._wake_waiters()
        super().stop()

    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one Messages API request, recording it as it arrives and then its answer."""
        entry = self.received.arrived(method, target, None, headers.get("Idempotency-Key"))
        response = self._serve(method.upper(), target, headers, body)
        self.received.answered(entry, response)
        return response

    def _serve(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response:
        request_id = new_id("req")
        _pause(self.faults.latency_ms)
        admitted = self._admit(method, target, headers, body, request_id)
        if isinstance(admitted, Response):
            return admitted
        request, key = admitted
        try:
            plan = self.faults.plan_for(
                method, "/v1/messages", None, None, headers.get(FAULT_HEADER)
            )
        except ValueError as exc:
            message = f"Invalid {FAULT_HEADER} header: {exc}"
            return error_response(400, "invalid_request_error", request_id, message)
        if plan.drop_before or plan.error_before:
            _pause(plan.delay_before_ms)
            return (
                Response(drop=True)
                if plan.drop_before
                else error_response(500, "api_error", request_id)
            )
        self.faults.wait_at_holds(plan)
        _pause(plan.delay_before_ms)
        response = self._answer(request, key, request_id)
        if plan.error_after:
            response = error_response(500, "api_error", request_id)
        _pause(plan.delay_after_ms)
        return Response(drop=True) if plan.drop_after else response

    def _admit(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes,
        request_id: str,
    ) -> tuple[MessagesRequest, str] | Response:
        """Route, key, version and body checked, in Anthropic's order; the refusal if any."""
        path = target.partition("?")[0]
        if (method, path) != ("POST", "/v1/messages"):
            return error_response(404, "not_found_error", request_id, f"Not found: {path}")
        key = _presented_key(headers)
        with self._keys_lock:
            accepted = key is not None and any(
                hmac.compare_digest(key, known) for known in self._api_keys
            )
        if key is None or not accepted:
            message = "invalid x-api-key" if key else "x-api-key header is required"
            return error_response(401, "authentication_error", request_id, message)
        version_problem = _version_problem(headers.get("Anthropic-Version"))
        if version_problem is not None:
            return error_response(400, "invalid_request_error", request_id, version_problem)
        try:
            document = read_body(body)
            self._keep(document)
            return validate(document, known_model=known_model), key
        except InvalidRequest as refused:
            return error_response(refused.status, refused.type, request_id, refused.message)

    def _answer(self, request: MessagesRequest, key: str, request_id: str) -> Response:
        answer = self.script.take()
        if isinstance(answer, Slow):
            if not self._wait(answer.seconds):
                return Response(drop=True)
            answer = answer.then if answer.then is not None else self.script.default
        if isinstance(answer, ApiError):
            return error_response(
                answer.status,
                answer.type,
                request_id,
                answer.message,
                retry_after=answer.retry_after,
            )
        built = _content(request, answer)
        if isinstance(built, str):
            # The script asked for what this request makes impossible: a test bug, so the
            # SDK is told not to retry and the test sees it at once.
            log.warning("anthropic sandbox script does not fit the request: %s", built)
            message = f"Sandbox script does not fit this request: {built}"
            return error_response(500, "api_error", request_id, message, should_retry=False)
        content, stop_reason, stop_details = built
        if request.max_tokens == 0:  # a cache warm-up: the prompt is read, nothing is said
            content, stop_reason, stop_details = [], "max_tokens", None
        cache = self.cache.use(f"{key}\x00{request.model}", request.blocks, self.now())
        output_tokens = estimate_tokens(canonical(content)) if request.max_tokens else 0
        body = message_json(
            model=request.model,
            content=content,
            stop_reason=stop_reason,
            usage=usage_json(cache, output_tokens),
            stop_details=stop_details,
        )
        return Response(200, encode(body), headers_for(request_id))

    # -- the script ------------------------------------------------------------------------

    def queue(self, *answers: Answer) -> int:
        """Queue answers for the coming requests, in order; returns how many are queued."""
        return self.script.queue(*answers)

    def set_default(self, answer: Answer | None) -> None:
        """The answer given when nothing is queued (``None``: say nothing is scripted)."""
        self.script.default = answer

    def pending_answers(self) -> list[Answer]:
        """The answers still queued."""
        return self.script.pending()

    # -- keys ------------------------------------------------------------------------------

    def accept_key(self, key: str) -> None:
        """Accept ``key`` as an API key from now on."""
        if not key:
            raise ValueError("an API key cannot be empty")
        with self._keys_lock:
            self._api_keys.add(key)

    # -- faults ----------------------------------------------------------------------------

    def arm_fault(self, kind: str, *, count: int = 1, ms: int = 0, when: str = "before") -> Fault:
        """Arm a fault (``drop_before_commit``, ``error_500_after_commit``, ``delay``,
        ``hold``...) for the next ``count`` Messages requests."""
        return self.faults.arm(Fault(kind=kind, count=count, ms=ms, when=when))

    # -- what arrived ----------------------------------------------------------------------

    def request_bodies(self) -> list[JSON]:
        """The JSON body of every authenticated request, oldest first (copies)."""
        with self._bodies_lock:
            return copy.deepcopy(list(self._bodies))

    def clear_received_requests(self) -> None:
        """Forget the requests received so far, and their bodies."""
        super().clear_received_requests()
        with self._bodies_lock:
            self._bodies.clear()

    def _keep(self, document: JSON) -> None:
        with self._bodies_lock:
            self._bodies.append(document)

    # -- state -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the script, the prompt cache, faults and the requests received; let slow
        answers still waiting go (their connections drop). Accepted keys stay."""
        self.script.clear()
        self.cache.clear()
        self.faults.clear()
        self.clear_received_requests()
        self._wake_waiters()

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds`` of wall time; ``False`` when a reset or stop cut it short."""
        with self._wake_lock:
            wake = self._wake
        return not wake.wait(seconds)

    def _wake_waiters(self) -> None:
        with self._wake_lock:
            wake, self._wake = self._wake, threading.Event()
        wake.set()


def _pause(ms: int) -> None:
    if ms > 0:
        time.sleep(ms / 1000.0)


def _content(
    request: MessagesRequest, answer: Answer | None
) -> tuple[list[JSON], str, JSON | None] | str:
    """A scripted answer as content, stop reason and stop details, or why it cannot be."""
    if answer is None:
        return [{"type": "text", "text": NOTHING_SCRIPTED}], "end_turn", None
    if isinstance(answer, Text):
        return [{"type": "text", "text": answer.text}], "end_turn", None
    if isinstance(answer, Refusal):
        return [], "refusal", {"type": "refusal", "category": None, "explanation": None}
    if isinstance(answer, ToolUse | MalformedToolInput):
        given = answer.input if isinstance(answer, ToolUse) else answer.raw
        call = _tool_call(request, answer.name, given, must_match=isinstance(answer, ToolUse))
        if isinstance(call, str):
            return call
        return [call], "tool_use", None
    return f"a {type(answer).__name__} answer cannot be given here"


def _tool_call(
    request: MessagesRequest, name: str | None, given: JSON, *, must_match: bool
) -> JSON | str:
    """A ``tool_use`` block calling ``name`` (default: the forced tool, else the first),
    or why the request makes it impossible."""
    choice = request.tool_choice or {"type": "auto"}
    if choice["type"] == "none" or not request.tools:
        return "a tool call was scripted but the request offers no tool"
    if name is None:
        name = str(choice["name"]) if choice["type"] == "tool" else request.tools[0].name
    elif choice["type"] == "tool" and choice["name"] != name:
        return f"the request forces {choice['name']!r}, the script calls {name!r}"
    tool = request.tool(name)
    if tool is None:
        return f"the script calls {name!r}, which the request does not declare"
    issues = schema.problems(given, tool.input_schema)
    if must_match and issues:
        return f"the scripted input does not match {name}'s input_schema: {'; '.join(issues)}"
    if not must_match and not issues:
        return f"the scripted malformed input matches {name}'s input_schema"
    return {"type": "tool_use", "id": new_id("toolu"), "name": name, "input": given}
