"""Replies an outside agent drafts for a case's customer, kept for a person to send.

An agent's reply is checked as a person's typed reply is
(:func:`app.conversations.replies.check_reply`), against the case's actions as the
provider reported them and the amounts under review; a refused reply keeps nothing.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.agents.models import AgentCredential
from app.agents.service import agent_actor
from app.cases.models import Case
from app.conversations.replies import check_reply, refused_reply
from app.conversations.service import MAX_MESSAGE
from app.drafting.models import CaseDraftRecord
from app.drafting.service import reply_facts
from app.errors import InvalidInput
from app.validation import text

AGENT_DRAFTER = "agent"


def keep_agent_reply(
    session: Session, *, case: Case, agent: AgentCredential, body: object, now: datetime
) -> CaseDraftRecord:
    """An agent's reply to the customer of ``case``, kept for a person to send. Refused
    (nothing kept) when it claims a state no action of the case is in, as the provider
    reported it, or names an amount neither an action's nor one under review."""
    reply = str(text(body, "text", max_length=MAX_MESSAGE, multiline=True, required=True))
    facts, proposed = reply_facts(session, case)
    problems = check_reply(reply, actions=facts, proposed=proposed)
    if problems:
        raise InvalidInput(refused_reply(problems), field="text", code="reply_refused")
    record = CaseDraftRecord(
        id=uuid.uuid4(),
        shop_id=case.shop_id,
        case_id=case.id,
        drafter=AGENT_DRAFTER,
        next_step="answer",
        summary="",
        reply=reply,
        agent_id=agent.id,
        created_at=now,
    )
    session.add(record)
    session.flush()
    audit.record(
        session,
        shop_id=case.shop_id,
        kind="case.reply_drafted",
        actor=agent_actor(agent),
        case_id=case.id,
        # The draft's id, never its words: the chain holds no text meant for a customer.
        data={"draft_id": str(record.id)},
        now=now,
    )
    return record


def agent_replies(
    session: Session, case: Case, limit: int = 5
) -> list[tuple[CaseDraftRecord, AgentCredential]]:
    """The newest replies agents drafted for ``case``, each with the agent's credential."""
    rows = session.execute(
        select(CaseDraftRecord, AgentCredential)
        .join(AgentCredential, AgentCredential.id == CaseDraftRecord.agent_id)
        .where(
            CaseDraftRecord.shop_id == case.shop_id,
            CaseDraftRecord.case_id == case.id,
            AgentCredential.shop_id == case.shop_id,
        )
        .order_by(CaseDraftRecord.created_at.desc())
        .limit(limit)
    )
    return [(record, credential) for record, credential in rows]
