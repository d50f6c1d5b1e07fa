"""``/_sandbox/...``: JSON control routes for the Slack sandbox run as a process.

They mirror :class:`~.sandbox.SlackSandbox`'s methods: the shared kit's routes (clock,
faults, holds, latency, requests), and the posts taken, refusals asked for, and reset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlError, ControlRouter, control_router, fault_from_json

if TYPE_CHECKING:
    from .sandbox import SlackSandbox

JSON = dict[str, Any]

_FAULT_FIELDS = frozenset({"kind", "method", "path", "count", "ms", "when"})


def slack_control_router(sandbox: SlackSandbox) -> ControlRouter:
    """The control routes of ``sandbox``, behind its token."""
    s = sandbox
    router = control_router(sandbox)
    add = router.add
    add("GET", "/_sandbox/posts", lambda b, p: [post.to_json() for post in s.posts()])
    add(
        "POST",
        "/_sandbox/faults",
        lambda b, p: s.faults.arm(fault_from_json(b, allowed=_FAULT_FIELDS)).to_json(),
    )
    add("POST", "/_sandbox/refuse", lambda b, p: s.refuse(**_refusal(b)))
    add("POST", "/_sandbox/reset", lambda b, p: s.reset())
    return router


def _refusal(body: JSON) -> JSON:
    """``{"status", "count"?, "seconds"?, "retry_after"?}``."""
    unknown = set(body) - {"status", "count", "seconds", "retry_after"}
    if unknown:
        raise ControlError(400, f"unknown fields: {sorted(unknown)}")
    seconds = body.get("seconds")
    retry_after = body.get("retry_after")
    return {
        "status": int(body["status"]),
        "count": None if seconds is not None else int(body.get("count", 1)),
        "seconds": None if seconds is None else float(seconds),
        "retry_after": None if retry_after is None else int(retry_after),
    }
