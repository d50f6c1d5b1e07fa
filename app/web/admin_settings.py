"""The embedded admin's settings page: connections, staff, policy, the two switches, the
brakes and where alerts go.

The page shows every setting to every member; owners get the controls. Each control is
sent by ``static/admin_settings.js`` (the Stripe key form by ``static/admin.js``, as on
the setup page) to the staff JSON API, whose domain functions check the role again,
refuse everyone else (deny by default) and audit each change in its transaction. The
kill switch is the one exception to "owners only", as in
:func:`app.shops.service.set_kill_switch`: any approver may stop everything, and only an
owner may start it again. Resuming after a brake is the other: owners and approvers
(:func:`app.execution.brakes.resume`).

The staff list and the agents' credentials are read for owners only, as
:func:`app.staff.members.list_members` and :func:`app.agents.service.list_agent_credentials`
allow; everyone else sees their own role and limits. A new agent secret is shown once, by
the page's script, from the API's answer; the page itself never holds one.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from flask import g, render_template
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agents.models import AgentTool
from app.agents.service import list_agent_credentials
from app.alerts.models import AlertKind
from app.alerts.service import slack_setup
from app.connections.setup import setup_steps
from app.db import request_session
from app.errors import Forbidden
from app.execution.brakes import brake_state
from app.helpdesk.connection import gorgias_connection
from app.money import Money
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, ShopPolicy, StaffMember, StaffRole
from app.shops.policy_form import amount_example, form_fields, policy_currency
from app.shops.service import current_policy, policy_rules
from app.staff.members import ROLES, list_members
from app.web.admin_text import current_locale, policy_sentences, say
from app.web.people import people_for
from app.web.shopify_admin import bp, embedded_page
from app.whatif import Change
from app.words import WORDS, said
from integrations.currency import THREE_DECIMAL, TWO_DECIMAL, ZERO_DECIMAL
from integrations.provider import ActionKind
from integrations.stripe._errors import REQUIRED_PERMISSIONS

# Every currency's ISO 4217 digits, for the page's script to turn "USD 480.00" into
# minor units exactly as the server would.
CURRENCY_DIGITS = json.dumps(
    {
        **dict.fromkeys(sorted(ZERO_DECIMAL), 0),
        **dict.fromkeys(sorted(TWO_DECIMAL), 2),
        **dict.fromkeys(sorted(THREE_DECIMAL), 3),
    },
    sort_keys=True,
)


@bp.get("/settings")
@embedded_page
def settings(shop: Shop, member: StaffMember) -> str:
    session = request_session()
    is_owner = member.role in StaffRole.OWNER_ONLY
    policy = current_policy(session, shop.id)
    return render_template(
        "admin/settings.html",
        shop=shop,
        member=member,
        is_owner=is_owner,
        may_engage_kill_switch=member.role in StaffRole.CAN_APPROVE,
        may_resume=member.role in StaffRole.CAN_APPROVE,
        brake=brake_state(session, shop.id),
        slack=slack_setup(session, shop.id),
        alert_kinds=list(AlertKind),
        steps=setup_steps(session, shop),
        install=session.get(ShopifyInstall, shop.id),
        gorgias=gorgias_connection(session, shop.id),
        permissions=REQUIRED_PERMISSIONS,
        staff=list_members(session, shop=shop, actor=g.actor) if is_owner else [member],
        agents=list_agent_credentials(session, shop=shop, actor=g.actor) if is_owner else [],
        agent_kinds=list(ActionKind),
        agent_tools=list(AgentTool),
        roles=ROLES,
        limits_text=limits_text,
        policy=policy,
        policy_words=policy_sentences(policy, current_locale()),
        currency_digits=CURRENCY_DIGITS,
    )


def limits_text(limits: dict[str, int]) -> str:
    """A member's approval limits as an owner types them: ``USD 480.00, JPY 5000``."""
    return ", ".join(
        f"{currency.upper()} {Money(amount, currency).decimal_string()}"
        for currency, amount in sorted(limits.items())
    )


@bp.get("/policy")
@embedded_page
def policy_page(shop: Shop, member: StaffMember) -> str:
    """The policy as a form an owner fills in, and every version with who made it and what
    it changed; owners only (everyone reads the policy in words on the settings page)."""
    if member.role not in StaffRole.OWNER_ONLY:
        raise Forbidden(said("only an owner may change the shop's policy"), code="owner_only")
    session = request_session()
    policy = current_policy(session, shop.id)
    currency = policy_currency(policy, shop.currency)
    return render_template(
        "admin/policy.html",
        shop=shop,
        member=member,
        policy=policy,
        fields=form_fields(policy, currency),
        amount_example=amount_example(currency),
        kinds=list(ActionKind),
        versions=policy_versions(session, shop, current_locale()),
        changes=list(Change),
        what_if_words=what_if_words(),
        any_case=ANY_CASE,
    )


# Where the what-if's answer names a case, its link is this one's with the id replaced.
ANY_CASE = uuid.UUID(int=0)


def what_if_words() -> dict[str, dict[str, str]]:
    """The words the page's script says a what-if's answer with, in the page's language:
    its classes, the outcomes and the kinds of action."""
    return {
        group: {code: say(group, code) for code in WORDS[group]}
        for group in ("what_if", "outcome", "kind")
    }


@dataclass(frozen=True)
class PolicyVersion:
    """One saved version: who saved it and when, and what it changed, in the policy's own
    sentences (those it added, those it took away)."""

    version: int
    who: str
    at: datetime
    added: list[str]
    removed: list[str]


def policy_versions(
    session: Session, shop: Shop, locale: str, shown: int = 20
) -> list[PolicyVersion]:
    """The newest ``shown`` versions, each beside the one before it (the first beside the
    defaults every shop starts with)."""
    rows = list(
        session.scalars(
            select(ShopPolicy)
            .where(ShopPolicy.shop_id == shop.id)
            .order_by(ShopPolicy.version.desc())
            .limit(shown + 1)
        )
    )
    said_by = [policy_sentences(policy_rules(row), locale) for row in rows]
    if len(rows) <= shown:
        said_by.append(policy_sentences(policy_rules(None), locale))
    people = people_for(session, shop.id)
    return [
        PolicyVersion(
            version=row.version,
            who=people.of(row.created_by),
            at=row.created_at,
            added=[line for line in said_by[n] if line not in said_by[n + 1]],
            removed=[line for line in said_by[n + 1] if line not in said_by[n]],
        )
        for n, row in enumerate(rows[:shown])
    ]
