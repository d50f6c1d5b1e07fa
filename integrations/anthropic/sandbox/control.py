"""``/_sandbox/...``: JSON control routes for the Anthropic sandbox running as a process.

They mirror :class:`~.sandbox.AnthropicSandbox`'s methods: the shared kit's
:func:`~integrations.sandbox_kit.control_router` gives the token check, JSON, errors and
the routes every sandbox has (clock, faults, holds, latency, requests); this module adds
the script (answers queued and the default), the request bodies, API keys, arming faults
and reset. An API key alone can never steer the sandbox: every route needs the control
token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlError, ControlRouter, control_router, fault_from_json

from . import answers

if TYPE_CHECKING:
    from .sandbox import AnthropicSandbox

JSON = dict[str, Any]

# A Messages request has no idempotency key, account or GraphQL operation to filter on.
_FAULT_FIELDS = frozenset({"kind", "method", "path", "count", "ms", "when"})


def anthropic_control_router(sandbox: AnthropicSandbox) -> ControlRouter:
    """The control routes of ``sandbox``, behind its token."""
    s = sandbox
    router = control_router(sandbox)
    add = router.add
    add("POST", "/_sandbox/answers", lambda b, p: {"queued": s.queue(*_answers(b))})
    add("GET", "/_sandbox/answers", lambda b, p: [a.to_json() for a in s.pending_answers()])
    add("DELETE", "/_sandbox/answers", lambda b, p: s.script.clear())
    add("POST", "/_sandbox/answers/default", lambda b, p: s.set_default(_default(b)))
    add("GET", "/_sandbox/request_bodies", lambda b, p: s.request_bodies())
    add("POST", "/_sandbox/api_keys", lambda b, p: s.accept_key(str(b.get("key") or "")))
    add(
        "POST",
        "/_sandbox/faults",
        lambda b, p: s.faults.arm(fault_from_json(b, allowed=_FAULT_FIELDS)).to_json(),
    )
    add("POST", "/_sandbox/reset", lambda b, p: s.reset())
    return router


def _answers(body: JSON) -> list[answers.Answer]:
    """``{"answers": [{"kind": ...}, ...]}``."""
    listed = body.get("answers")
    if not isinstance(listed, list) or not listed:
        raise ControlError(400, 'say {"answers": [{"kind": ...}, ...]}')
    return [answers.from_json(item) for item in listed]


def _default(body: JSON) -> answers.Answer | None:
    """``{"answer": {"kind": ...}}``, or ``{"answer": null}`` for none."""
    if "answer" not in body:
        raise ControlError(400, 'say {"answer": {"kind": ...} | null}')
    return answers.from_json(body["answer"]) if body["answer"] is not None else None
