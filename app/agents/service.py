"""Agent credentials: issued by an owner, kept only as a hash, revocable at once.

An agent (an automated assistant outside Caseward) reaches Caseward through the MCP
server with a secret ``cwag_`` followed by 32 random bytes. The database keeps the
secret's SHA-256 and its first characters; the secret is shown to the owner once and
never stored or audited. A credential names one shop, the action kinds the agent may
propose, the MCP tools it may call (every tool unless the owner chose fewer) and,
optionally, the most it may propose per currency. An agent proposes and never approves:
:func:`app.approvals.service.create_proposal` reads the credential, and approving
requires a staff member's role.
"""

from __future__ import annotations

import hmac
import secrets
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor, ActorKind, Surface
from app.agents.models import AgentCredential, AgentTool
from app.cases.proposals import Proposal
from app.errors import InvalidInput, NotFound
from app.shops.models import Shop, StaffRole
from app.shops.service import require_role

# Kept, shown and marked as used exactly as staff tokens are.
from app.staff.tokens import LAST_USED_RESOLUTION, SHOWN_PREFIX_LENGTH, token_hash
from app.validation import choice, currency_code, integer, text
from app.words import said
from integrations.provider import ActionKind

SECRET_PREFIX = "cwag_"  # noqa: S105  (a marker that makes leaked secrets recognisable)


@dataclass(frozen=True)
class IssuedCredential:
    """A new credential: ``secret`` is shown once and then exists only with its holder."""

    credential: AgentCredential
    secret: str


def agent_actor(credential: AgentCredential) -> Actor:
    return Actor(ActorKind.AGENT, str(credential.id), Surface.MCP)


def issue_agent_credential(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    name: str,
    allowed_kinds: Iterable[str],
    ceiling: Mapping[str, int] | None,
    now: datetime,
    allowed_tools: Iterable[str] = tuple(AgentTool),
) -> IssuedCredential:
    """A new credential for an agent of ``shop``; only an owner may issue one."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("issue agent credentials"))
    kinds = _allowed_kinds(allowed_kinds)
    tools = _allowed_tools(allowed_tools)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    credential = AgentCredential(
        shop_id=shop.id,
        name=text(name, "name", required=True),
        secret_digest=token_hash(secret),
        prefix=secret[:SHOWN_PREFIX_LENGTH],
        allowed_kinds=kinds,
        allowed_tools=tools,
        ceiling=_ceiling(ceiling),
        created_by=actor.ref,
        created_at=now,
    )
    session.add(credential)
    session.flush()
    audit.record(
        session,
        shop_id=shop.id,
        kind="agent.credential_issued",
        actor=actor,
        data={
            "credential_id": str(credential.id),
            "prefix": credential.prefix,
            "name": credential.name,
            "allowed_kinds": kinds,
            "allowed_tools": tools,
            "ceiling": credential.ceiling,
        },
        now=now,
    )
    return IssuedCredential(credential, secret)


def authenticate_agent(session: Session, secret: str, now: datetime) -> AgentCredential | None:
    """The live credential ``secret`` belongs to, or ``None`` (unknown or revoked)."""
    if not secret.startswith(SECRET_PREFIX):
        return None
    digest = token_hash(secret)
    credential = session.scalars(
        select(AgentCredential).where(AgentCredential.secret_digest == digest)
    ).one_or_none()
    # Looked up by hash, so the database never compares the secret; constant time all the same.
    if credential is None or not hmac.compare_digest(credential.secret_digest, digest):
        return None
    if credential.revoked_at is not None:
        return None
    if credential.last_used_at is None or now - credential.last_used_at >= LAST_USED_RESOLUTION:
        credential.last_used_at = now
    return credential


def revoke_agent_credential(
    session: Session, *, shop: Shop, actor: Actor, credential_id: uuid.UUID, now: datetime
) -> AgentCredential:
    """Revoke a credential of ``shop`` (owners only); the agent's next call is refused."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("revoke agent credentials"))
    credential = session.get(AgentCredential, credential_id)
    if credential is None or credential.shop_id != shop.id:
        raise NotFound(said("agent credential not found"), field="credential_id")
    if credential.revoked_at is None:
        credential.revoked_at = now
        audit.record(
            session,
            shop_id=shop.id,
            kind="agent.credential_revoked",
            actor=actor,
            data={"credential_id": str(credential.id), "prefix": credential.prefix},
            now=now,
        )
    return credential


def list_agent_credentials(session: Session, *, shop: Shop, actor: Actor) -> list[AgentCredential]:
    """The shop's agent credentials, newest first (owners only)."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("see agent credentials"))
    return list(
        session.scalars(
            select(AgentCredential)
            .where(AgentCredential.shop_id == shop.id)
            .order_by(AgentCredential.created_at.desc())
        )
    )


def proposing_agent(session: Session, proposal: Proposal) -> AgentCredential | None:
    """The agent whose credential made ``proposal``, or None when a person or Caseward
    made it (``proposed_by`` is ``agent:<credential id>`` for an agent's)."""
    credential_id = _agent_id(proposal)
    credential = session.get(AgentCredential, credential_id) if credential_id else None
    return credential if credential is not None and credential.shop_id == proposal.shop_id else None


def proposing_agents(
    session: Session, proposals: Iterable[Proposal]
) -> dict[uuid.UUID, AgentCredential]:
    """:func:`proposing_agent` of each proposal an agent made, by proposal id, in one query."""
    made_by = {proposal: _agent_id(proposal) for proposal in proposals}
    wanted = {credential_id for credential_id in made_by.values() if credential_id}
    if not wanted:
        return {}
    found = {
        credential.id: credential
        for credential in session.scalars(
            select(AgentCredential).where(AgentCredential.id.in_(wanted))
        )
    }
    return {
        proposal.id: found[credential_id]
        for proposal, credential_id in made_by.items()
        if credential_id in found and found[credential_id].shop_id == proposal.shop_id
    }


def _agent_id(proposal: Proposal) -> uuid.UUID | None:
    kind, _, credential_id = proposal.proposed_by.partition(":")
    if kind != ActorKind.AGENT:
        return None
    try:
        return uuid.UUID(credential_id)
    except ValueError:
        return None


def _allowed_kinds(kinds: Iterable[str]) -> list[str]:
    chosen = sorted({choice(kind, "allowed_kinds", tuple(ActionKind)) for kind in kinds})
    if not chosen:
        raise InvalidInput(
            said("an agent credential must allow at least one action kind"),
            field="allowed_kinds",
        )
    return chosen


def _allowed_tools(tools: Iterable[str]) -> list[str]:
    chosen = sorted({choice(tool, "allowed_tools", tuple(AgentTool)) for tool in tools})
    if not chosen:
        raise InvalidInput(
            said("an agent credential must allow at least one tool"), field="allowed_tools"
        )
    return chosen


def _ceiling(ceiling: Mapping[str, int] | None) -> dict[str, int] | None:
    if ceiling is None:
        return None
    return {
        currency_code(currency, "ceiling"): integer(amount, f"ceiling.{currency}", minimum=0)
        for currency, amount in ceiling.items()
    }
