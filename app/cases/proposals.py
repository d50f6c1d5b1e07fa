"""A proposed money action and the approvals given to one exact version of it."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum, nonmember
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class ProposalStatus(StrEnum):
    """Lifecycle of a proposal. Changes follow :data:`app.cases.lifecycle.PROPOSAL_MOVES`.

    ``blocked``: a built-in check or policy refuses it; nothing can approve it.
    ``awaiting_approval``: checks passed; it needs ``approvals_required`` people.
    ``approved``: enough valid approvals; an action exists and owns execution.
    ``rejected``: a person said no.
    """

    BLOCKED = "blocked"
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    REJECTED = "rejected"

    OPEN = nonmember((BLOCKED, AWAITING_APPROVAL))
    # In hand: waiting for a person, or approved with its action under way; the drafter
    # proposes nothing beside it.
    IN_HAND = nonmember((AWAITING_APPROVAL, APPROVED))


class Proposal(Base):
    __tablename__ = "proposals"
    # The admin queue counts a shop's proposals awaiting approval; the policy what-if reads
    # those of the last 90 days.
    __table_args__ = (
        Index("ix_proposals_shop_id_status", "shop_id", "status"),
        Index("ix_proposals_shop_id_created_at", "shop_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    case_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("cases.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    provider: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(255))
    customer_ref: Mapped[str | None] = mapped_column(String(255))
    amount: Mapped[int | None] = mapped_column(Integer)
    currency: Mapped[str | None] = mapped_column(String(3))
    line_items: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The money a refund gives back, whichever provider is asked
    # (see app.execution.evaluation.money_of).
    money_ref: Mapped[str | None] = mapped_column(String(255))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    reason: Mapped[str | None] = mapped_column(Text)
    # Why a person rejected it, in their words: kept here, where an erasure reaches them,
    # not in the audit chain, which is never erased and records only who and when.
    rejection_reason: Mapped[str | None] = mapped_column(Text)
    proposed_by: Mapped[str] = mapped_column(String(255))
    # Every edit bumps the revision and the digest; approvals of older digests are void.
    revision: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(32))
    verdict: Mapped[dict[str, Any]] = mapped_column(JSON)
    # What the verdict's checks were asked with (app.guard.GuardInputs.to_dict), to replay
    # them under another policy; None for proposals checked before they were kept.
    guard_inputs: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    approvals_required: Mapped[int] = mapped_column(Integer, default=1)
    policy_version: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Approval(Base):
    """One person's approval of one digest. Single-use; void when the proposal changes."""

    __tablename__ = "approvals"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    proposal_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("proposals.id"), index=True)
    digest: Mapped[str] = mapped_column(String(64))
    approver: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    consumed_by_action: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    voided_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    void_reason: Mapped[str | None] = mapped_column(Text)
    void_sentence: Mapped[dict[str, Any] | None] = mapped_column(JSON)
