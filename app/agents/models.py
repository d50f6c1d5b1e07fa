"""An agent's credential, stored the way staff tokens are: only a hash of the secret.

The secret (``cwag_`` and 32 random bytes) is shown once, when an owner issues it. The
database keeps its SHA-256 hex digest, a prefix a person can recognise in a list, what
the agent may propose (``allowed_kinds``, a list of action kinds), the MCP tools it may
call (``allowed_tools``) and, optionally, the most it may propose per currency
(``ceiling``: ``{currency: minor units}``). Who issued it, when it was revoked and when
it was last used complete the row.

:class:`AgentTool` is the one list of the MCP tools: the server registers each tool under
its name here, so a credential's ``allowed_tools`` and the tools served cannot drift apart.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, ForeignKey, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class AgentTool(StrEnum):
    """The MCP server's tools. None approves, executes or sends anything."""

    FIND_CASE = "find_case"
    READ_CASE = "read_case"
    LIST_ORDERS_AND_PAYMENTS = "list_orders_and_payments"
    PROPOSE_ACTION = "propose_action"
    ACTION_STATUS = "action_status"
    DRAFT_REPLY = "draft_reply"


class AgentCredential(Base):
    __tablename__ = "agent_credentials"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    secret_digest: Mapped[str] = mapped_column(String(64), unique=True)
    # The first characters of the secret, enough for a person to tell credentials apart.
    prefix: Mapped[str] = mapped_column(String(16))
    allowed_kinds: Mapped[list[str]] = mapped_column(JSON)
    allowed_tools: Mapped[list[str]] = mapped_column(JSON)
    ceiling: Mapped[dict[str, int] | None] = mapped_column(JSON)
    created_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
