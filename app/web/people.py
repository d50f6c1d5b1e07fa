"""Who did something, as people read it: a stored actor reference (``1002``,
``system:drafter``, ``agent:…``) in a name.

Staff by the name Shopify gave at their first visit, else their email, else their user id;
the drafter as what drafts for this deployment (Claude, or Caseward's own rules); a shopper
as the case's customer; an agent by its credential's name; Caseward's own processes as
Caseward, a provider's report by the provider, and an auto-approval by the shop's policy
and its version.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import DRAFTER, PROVIDER_REPORT, SWEEPER, WORKER, ActorKind
from app.agents.models import AgentCredential
from app.shops.models import StaffMember
from app.web.admin_text import catalogue

AGENT_PREFIX = f"{ActorKind.AGENT}:"
CUSTOMER_PREFIX = f"{ActorKind.CUSTOMER}:"


# Caseward's own processes and the outside systems that act through it, by name: a
# provider's report is the provider's word, a Gorgias call the helpdesk's.
SYSTEMS = {
    DRAFTER.ref: None,  # named by the deployment's drafter (people_of's ``drafter``)
    WORKER.ref: "Caseward",
    SWEEPER.ref: "Caseward",
    PROVIDER_REPORT.ref: "Caseward",
    f"{ActorKind.SYSTEM}:install": "Caseward",
    f"{ActorKind.SYSTEM}:demo": "Caseward",
    f"{ActorKind.SYSTEM}:helpdesk": "Gorgias",
    f"{ActorKind.SYSTEM}:gorgias": "Gorgias",
    f"{ActorKind.SYSTEM}:shopify": "Shopify",
    f"{ActorKind.SYSTEM}:provider:shopify": "Shopify",
    f"{ActorKind.SYSTEM}:provider:stripe": "Stripe",
}
# The shop's policy deciding on its own (an auto-approval): ``system:policy:v3``.
POLICY_PREFIX = f"{ActorKind.SYSTEM}:policy:v"


@dataclass(frozen=True)
class People:
    names: Mapping[str, str]
    # What a shopper is called: the case's customer, whatever their reference.
    customer: str
    # The shop's policy by its version: "the shop's policy (version %(version)s)".
    policy: str = "%(version)s"

    def of(self, ref: str | None) -> str:
        """The name behind ``ref``; a reference nobody is known by, as stored."""
        if not ref:
            return ""
        if ref.startswith(CUSTOMER_PREFIX):
            return self.customer
        if ref.startswith(POLICY_PREFIX):
            return self.policy % {"version": ref.removeprefix(POLICY_PREFIX)}
        return self.names.get(ref, ref)

    def listed(self, refs: Iterable[str]) -> str:
        return ", ".join(self.of(ref) for ref in refs)


def people_of(
    session: Session, shop_id: uuid.UUID, *, drafter: str, customer: str, policy: str
) -> People:
    """Everyone of the shop by their reference; ``drafter`` names the drafter,
    ``customer`` any shopper and ``policy`` the shop's policy by its version."""
    names = {ref: name or drafter for ref, name in SYSTEMS.items()}
    for user_id, name, email in session.execute(
        select(StaffMember.user_id, StaffMember.name, StaffMember.email).where(
            StaffMember.shop_id == shop_id
        )
    ):
        names[user_id] = name or email or user_id
    for credential_id, name in session.execute(
        select(AgentCredential.id, AgentCredential.name).where(AgentCredential.shop_id == shop_id)
    ):
        names[f"{AGENT_PREFIX}{credential_id}"] = name
    return People(names, customer, policy)


def people_for(session: Session, shop_id: uuid.UUID) -> People:
    """The shop's people as the request's reader names them."""
    settings = current_app.config["CASEWARD_SETTINGS"]
    _ = catalogue().gettext
    drafter = (
        _("Claude (drafter)") if settings.anthropic_api_key else _("Caseward's rules (drafter)")
    )
    return people_of(
        session,
        shop_id,
        drafter=drafter,
        customer=_("the customer"),
        policy=_("the shop's policy (version %(version)s)"),
    )
