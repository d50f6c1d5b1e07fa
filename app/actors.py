"""Who did something, and through which door.

Every surface that accepts a request (the Shopify admin, the staff API, the operator page,
the storefront widget, a helpdesk, an agent's MCP connection) has its own verifier, and
each verifier's only output is an :class:`Actor`: the kind of party, its identity in that
kind's own terms, and the surface it came through. Domain functions take the actor, never
a bare name, and the audit chain records all three parts, so "who approved this refund"
always has an answer that says how that person was authenticated.

``Actor.ref`` is the one string written to columns that name a person (``proposed_by``,
``approver``): a staff member's Shopify user id as it is, anything else prefixed with its
kind, so a customer or an agent can never be mistaken for staff with the same id.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ActorKind(StrEnum):
    STAFF = "staff"  # a member of the shop's staff, with a role in ``staff_members``
    CUSTOMER = "customer"  # the shopper a case is about
    AGENT = "agent"  # an automated agent with its own credential
    SYSTEM = "system"  # Caseward itself: workers, the sweeper, provider reports


class Surface(StrEnum):
    SHOPIFY_ADMIN = "shopify_admin"  # the embedded app, Shopify session tokens
    STAFF_API = "staff_api"  # Caseward staff tokens on the JSON API
    OPERATOR_PAGE = "operator_page"  # the operator page's server-side session
    CONSOLE = "console"  # the ``flask`` command line on the server
    WORKER = "worker"  # RQ jobs
    SWEEPER = "sweeper"  # the sweeper's loop
    PROVIDER = "provider"  # a provider's signed webhook or its answers
    STOREFRONT = "storefront"  # the chat widget through the app proxy
    HELPDESK = "helpdesk"  # a helpdesk integration
    MCP = "mcp"  # an agent's MCP connection


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    id: str
    surface: Surface

    @property
    def ref(self) -> str:
        return self.id if self.kind is ActorKind.STAFF else f"{self.kind}:{self.id}"

    def __str__(self) -> str:
        return f"{self.ref} via {self.surface}"


def staff(user_id: str, surface: Surface) -> Actor:
    return Actor(ActorKind.STAFF, user_id, surface)


def system_actor(name: str, surface: Surface) -> Actor:
    """Caseward acting on its own: a process (``system:worker``) or a shop's policy
    approving within its own limits (``system:policy:v3``)."""
    return Actor(ActorKind.SYSTEM, name, surface)


WORKER = system_actor("worker", Surface.WORKER)
SWEEPER = system_actor("sweeper", Surface.SWEEPER)
PROVIDER_REPORT = system_actor("provider", Surface.PROVIDER)
# Caseward's drafter (Claude or the offline rules): it may propose, never approve.
DRAFTER = system_actor("drafter", Surface.WORKER)
