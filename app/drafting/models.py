"""One row per drafting run of a case: who drafted, what it cost, and what came of it.

Caseward's drafter sends its checked reply at once (the chat) or offers it to a helpdesk
agent in a note; an outside agent's reply (the MCP ``draft_reply`` tool) is kept here
instead, checked, for a person to send: ``reply`` holds it and ``agent_id`` names the
agent's credential. Caseward never sends such a reply itself.

A run also keeps the customer's claim the drafter stated, and the drafter's own words when
the deny-by-default check refused them (:mod:`app.conversations.free_text`): staff read
them on the case; the customer never does. Erasure blanks both with the case's text.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class CaseDraftRecord(Base):
    """A drafting run. Token counts come from the model's own usage fields (zero for the
    offline rules and for agents); ``summary`` is for staff and is erased with the case's
    text."""

    __tablename__ = "case_drafts"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    case_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("cases.id"), index=True)
    drafter: Mapped[str] = mapped_column(String(16))
    model: Mapped[str | None] = mapped_column(String(64))
    next_step: Mapped[str] = mapped_column(String(32))
    summary: Mapped[str] = mapped_column(Text, default="")
    # Why the model's answer was not used, or why its proposal or reply was refused.
    failure: Mapped[str | None] = mapped_column(Text)
    proposal_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("proposals.id"))
    # The customer's claim as the drafter stated it (app/drafting/result.py::claim_dict).
    claim: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The drafter's own words to the customer when the check refused them (never sent).
    refused_text: Mapped[str | None] = mapped_column(Text)
    # An agent's checked reply, waiting for a person to send it; None for the drafter's.
    reply: Mapped[str | None] = mapped_column(Text)
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agent_credentials.id"))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_read_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_write_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
