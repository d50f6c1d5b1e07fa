"""The Slack sandbox as an object: incoming-webhook posts taken, kept, and refused on demand.

:class:`SlackSandbox` serves ``POST /services/{team}/{bot}/{secret}`` as Slack serves an
incoming webhook: a JSON body with ``text`` gets ``200 ok`` (``text/plain``), a body it
cannot read ``400 invalid_payload``, one without text ``400 no_text``, any other path
``404 no_service``. Every hook address is one it knows: the sandbox stands for a
workspace that made it. Serving, time, faults, holds, latency and the request log come
from the shared kit's :class:`~integrations.sandbox_kit.SandboxBase`.

The sequence of one post (:meth:`SlackSandbox.handle_api`): record its arrival; find the
route; ask the fault board for its plan (drop or 500 before taking it, holds, delays); answer
a refusal the test asked for (:meth:`SlackSandbox.refuse`: a status, with ``Retry-After``
for a 429, for the next ``count`` posts or for ``seconds`` of sandbox time); read the
body; keep the post (its path, the headers Caseward signs with, the body's bytes and
text); let the plan drop or spoil the answer; record the answer.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from integrations.sandbox_kit import (
    FAULT_HEADER,
    Clock,
    Dispatch,
    NoDeliveries,
    Response,
    SandboxBase,
)

from .control import slack_control_router

JSON = dict[str, Any]

_HOOK = re.compile(r"^/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9_-]+$")
# The headers a post is kept with (Caseward's signature, and what the body is).
KEPT_HEADERS = ("Content-Type", "X-Caseward-Timestamp", "X-Caseward-Signature")


@dataclass(frozen=True)
class Post:
    """One post the sandbox took: where, with which headers, what it said, and when
    (sandbox time)."""

    number: int
    path: str
    headers: dict[str, str]
    body: bytes
    text: str
    at: float

    def to_json(self) -> JSON:
        shown = asdict(self)
        shown["body"] = self.body.decode("utf-8", errors="replace")
        return shown


@dataclass
class _Refusal:
    """Answer ``status`` to the next ``count`` posts, or to every post until ``until``."""

    status: int
    count: int | None
    until: float | None
    retry_after: int | None


class SlackSandbox(SandboxBase):
    """Slack's incoming webhooks, in memory."""

    serving_name = "slack-sandbox"

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        control_token: str | None = None,
        background_interval: float = 1.0,
    ) -> None:
        super().__init__(
            clock=clock, control_token=control_token, background_interval=background_interval
        )
        self._lock = threading.Lock()
        self._posts: list[Post] = []
        self._refusals: list[_Refusal] = []
        self._no_webhooks = NoDeliveries()

    # -- the provider's parts ---------------------------------------------------------

    def _control(self) -> Dispatch:
        return slack_control_router(self).handle

    def _failure(self) -> Response:
        return _plain(500, "internal_error")

    @property
    def _deliveries(self) -> NoDeliveries:
        return self._no_webhooks

    def process_due(self) -> int:
        """Nothing happens later at an incoming webhook."""
        return 0

    # -- controls ---------------------------------------------------------------------

    def refuse(
        self,
        status: int,
        *,
        count: int | None = 1,
        seconds: float | None = None,
        retry_after: int | None = None,
    ) -> None:
        """Answer ``status`` (429, 500, 503 ...) to the next ``count`` posts, or, given
        ``seconds``, to every post for that long; a 429 says ``Retry-After``."""
        if not 400 <= status <= 599:
            raise ValueError("a refusal is a 4xx or 5xx status")
        if seconds is None and (count is None or count < 1):
            raise ValueError("say for how many posts (count) or for how long (seconds)")
        until = self.now() + seconds if seconds is not None else None
        with self._lock:
            self._refusals.append(
                _Refusal(status, None if seconds is not None else count, until, retry_after)
            )

    def posts(self) -> list[Post]:
        """Every post taken, oldest first."""
        with self._lock:
            return list(self._posts)

    def reset(self) -> None:
        """Forget the posts taken and the refusals asked for."""
        with self._lock:
            self._posts.clear()
            self._refusals.clear()

    # -- serving ----------------------------------------------------------------------

    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        entry = self.received.arrived(method, target, None, None)
        response = self._serve(method.upper(), target.partition("?")[0], headers, body)
        self.received.answered(entry, response)
        return response

    def _serve(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        _pause(self.faults.latency_ms)
        if method != "POST" or not _HOOK.fullmatch(path):
            return _plain(404, "no_service")
        try:
            plan = self.faults.plan_for(method, path, None, None, headers.get(FAULT_HEADER))
        except ValueError as exc:  # a malformed fault header
            return _plain(400, str(exc))
        if plan.drop_before or plan.error_before:
            _pause(plan.delay_before_ms)
            return Response(drop=True) if plan.drop_before else self._failure()
        self.faults.wait_at_holds(plan)
        _pause(plan.delay_before_ms)
        refusal = self._next_refusal()
        if refusal is not None:
            extra = {"Retry-After": str(refusal.retry_after)} if refusal.retry_after else {}
            code = "rate_limited" if refusal.status == 429 else "internal_error"
            return _plain(refusal.status, code, extra)
        response = self._take(path, headers, body)
        if plan.error_after:
            response = self._failure()
        _pause(plan.delay_after_ms)
        return Response(drop=True) if plan.drop_after else response

    def _take(self, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        try:
            document = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return _plain(400, "invalid_payload")
        if not isinstance(document, dict):
            return _plain(400, "invalid_payload")
        text = document.get("text")
        if not isinstance(text, str) or not text.strip():
            return _plain(400, "no_text")
        kept = {name: headers[name] for name in KEPT_HEADERS if name in headers}
        with self._lock:
            self._posts.append(Post(len(self._posts) + 1, path, kept, body, text, self.now()))
        return _plain(200, "ok")

    def _next_refusal(self) -> _Refusal | None:
        now = self.now()
        with self._lock:
            self._refusals = [
                r
                for r in self._refusals
                if (r.count is None or r.count > 0) and (r.until is None or now < r.until)
            ]
            if not self._refusals:
                return None
            refusal = self._refusals[0]
            if refusal.count is not None:
                refusal.count -= 1
            return refusal


def _plain(status: int, text: str, headers: Mapping[str, str] | None = None) -> Response:
    plain = {"Content-Type": "text/plain; charset=utf-8", **(headers or {})}
    return Response(status, text.encode("utf-8"), plain)


def _pause(ms: int) -> None:
    if ms > 0:
        time.sleep(ms / 1000.0)
