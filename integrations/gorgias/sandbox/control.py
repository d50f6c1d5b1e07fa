"""``/_sandbox/...``: JSON control routes for the Gorgias sandbox running as a process.

They mirror :class:`~.sandbox.GorgiasSandbox`'s methods: the shared kit's
:func:`~integrations.sandbox_kit.control_router` gives the token check, JSON, errors and
the routes every sandbox has (clock, faults, holds, latency, requests, delivery
switches); this module adds accounts and their users, what happens in the helpdesk (a
customer opens a ticket or writes, an agent writes, a ticket's status changes), HTTP
integrations, the rate limit, arming faults and reset. Accounts are named by their
``*.gorgias.com`` domain in the path, tickets by their id. An API key alone can never
steer the sandbox: every route needs the control token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlError, ControlRouter, control_router, fault_from_json

from .http_integrations import IntegrationConfig
from .state import ApiUser

if TYPE_CHECKING:
    from .sandbox import GorgiasSandbox

JSON = dict[str, Any]

# A Gorgias request's "key" is a posted message's external_id; it has no operation.
_FAULT_FIELDS = frozenset(
    {"kind", "method", "path", "idempotency_key", "account", "count", "ms", "when"}
)


def gorgias_control_router(sandbox: GorgiasSandbox) -> ControlRouter:
    """The control routes of ``sandbox``, behind its token."""
    s = sandbox
    router = control_router(sandbox)
    add = router.add
    add(
        "POST",
        "/_sandbox/accounts",
        lambda b, p: s.account(
            s.create_account(
                str(b["name"]),
                api_users=_api_users(b.get("api_users") or []),
                support_address=b.get("support_address"),
            )
        ),
    )
    add("GET", "/_sandbox/accounts/{domain}", lambda b, p: s.account(p["domain"]))
    add(
        "POST",
        "/_sandbox/accounts/{domain}/users",
        lambda b, p: {
            "id": s.add_user(
                p["domain"], str(b["email"]), api_key=b.get("api_key"), name=b.get("name")
            )
        },
    )
    add(
        "POST",
        "/_sandbox/accounts/{domain}/tickets",
        lambda b, p: s.ticket(
            s.open_ticket(
                p["domain"],
                customer_email=str(b["customer_email"]),
                subject=str(b["subject"]),
                body_text=str(b["body_text"]),
                customer_name=b.get("customer_name"),
                channel=str(b.get("channel") or "email"),
            )
        ),
    )
    add(
        "POST",
        "/_sandbox/accounts/{domain}/integrations",
        lambda b, p: s.add_integration_config(p["domain"], IntegrationConfig.from_json(b)),
    )
    add(
        "GET",
        "/_sandbox/accounts/{domain}/integrations",
        lambda b, p: s.account_integrations(p["domain"]),
    )
    add(
        "POST",
        "/_sandbox/accounts/{domain}/throttle",
        lambda b, p: s.throttle(p["domain"], float(b["seconds"])),
    )
    add("GET", "/_sandbox/tickets/{id}", lambda b, p: s.ticket(_id(p)))
    add(
        "POST",
        "/_sandbox/tickets/{id}/customer_writes",
        lambda b, p: {"message_id": s.customer_writes(_id(p), str(b["body_text"]))},
    )
    add(
        "POST",
        "/_sandbox/tickets/{id}/agent_writes",
        lambda b, p: {
            "message_id": s.agent_writes(
                _id(p),
                str(b["body_text"]),
                internal=bool(b.get("internal")),
                user_email=b.get("user_email"),
            )
        },
    )
    add("POST", "/_sandbox/tickets/{id}/status", lambda b, p: s.set_status(_id(p), b["status"]))
    add("GET", "/_sandbox/integrations/{id}", lambda b, p: s.integration(_id(p)))
    add(
        "POST",
        "/_sandbox/faults",
        lambda b, p: s.faults.arm(fault_from_json(b, allowed=_FAULT_FIELDS)).to_json(),
    )
    add("POST", "/_sandbox/reset", lambda b, p: s.reset())
    return router


def _id(path: dict[str, str]) -> int:
    if not path["id"].isdigit():
        raise ControlError(400, "ids are integers")
    return int(path["id"])


def _api_users(listed: object) -> list[ApiUser]:
    """``[{"email", "api_key", "name"?}, ...]``."""
    if not isinstance(listed, list):
        raise ControlError(400, 'say "api_users": [{"email": ..., "api_key": ...}]')
    return [
        ApiUser(str(item["email"]), str(item["api_key"]), item.get("name"))
        for item in listed
        if isinstance(item, dict)
    ]
