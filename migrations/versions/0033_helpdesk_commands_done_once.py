"""helpdesk commands done once, with their notes

Revision ID: 0033_helpdesk_commands_done_once
Revises: 0032_helpdesk_prepare_on_arrival
Create Date: 2026-12-07

An agent's command in a Gorgias ticket (a macro's internal note) was claimed as a kept
provider event: a run of its call that failed after the claim left it claimed and never
acted on, and a run that acted but could not post its note left the agents unanswered.
Commands now have a table of their own: the call that claimed them, when they were done
(in the transaction of their effect), the note for the agents, and the action they queued.
Commands claimed before move here as done: whatever came of them then stands.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033_helpdesk_commands_done_once"
down_revision: str | None = "0032_helpdesk_prepare_on_arrival"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_EVENTS = sa.table(
    "provider_events",
    sa.column("shop_id", sa.Uuid()),
    sa.column("provider", sa.String()),
    sa.column("event_id", sa.String()),
    sa.column("type", sa.String()),
    sa.column("object_id", sa.String()),
    sa.column("created", sa.DateTime(timezone=True)),
    sa.column("payload", sa.JSON()),
    sa.column("received_at", sa.DateTime(timezone=True)),
)
_COMMAND_EVENTS = sa.and_(_EVENTS.c.provider == "gorgias", _EVENTS.c.event_id.like("command:%"))


def upgrade() -> None:
    commands = op.create_table(
        "helpdesk_commands",
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), primary_key=True),
        sa.Column("note_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("conversation_id", sa.Uuid(), sa.ForeignKey("conversations.id"), nullable=True),
        sa.Column("command", sa.String(32), nullable=False),
        sa.Column("agent_email", sa.String(255), nullable=True),
        sa.Column("call_key", sa.String(255), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("action_id", sa.Uuid(), sa.ForeignKey("actions.id"), nullable=True),
    )
    op.create_index(
        "ix_helpdesk_commands_conversation_id", "helpdesk_commands", ["conversation_id"]
    )
    bind = op.get_bind()
    taken = bind.execute(
        sa.select(
            _EVENTS.c.shop_id, _EVENTS.c.object_id, _EVENTS.c.payload, _EVENTS.c.received_at
        ).where(_COMMAND_EVENTS)
    ).all()
    if taken:
        op.bulk_insert(
            commands,
            [
                {
                    "shop_id": shop_id,
                    "note_id": int(note_id),
                    "command": payload["command"],
                    "agent_email": payload.get("agent"),
                    "call_key": "",
                    "claimed_at": received_at,
                    "done_at": received_at,
                }
                for shop_id, note_id, payload, received_at in taken
            ],
        )
    bind.execute(sa.delete(_EVENTS).where(_COMMAND_EVENTS))


def downgrade() -> None:
    commands = sa.table(
        "helpdesk_commands",
        sa.column("shop_id", sa.Uuid()),
        sa.column("note_id", sa.BigInteger()),
        sa.column("command", sa.String()),
        sa.column("agent_email", sa.String()),
        sa.column("claimed_at", sa.DateTime(timezone=True)),
    )
    bind = op.get_bind()
    taken = bind.execute(
        sa.select(
            commands.c.shop_id,
            commands.c.note_id,
            commands.c.command,
            commands.c.agent_email,
            commands.c.claimed_at,
        )
    ).all()
    if taken:
        op.bulk_insert(
            _EVENTS,
            [
                {
                    "shop_id": shop_id,
                    "provider": "gorgias",
                    "event_id": f"command:{note_id}",
                    "type": f"command:{command}",
                    "object_id": str(note_id),
                    "created": claimed_at,
                    "payload": {"command": command, "agent": agent_email},
                    "received_at": claimed_at,
                }
                for shop_id, note_id, command, agent_email, claimed_at in taken
            ],
        )
    op.drop_index("ix_helpdesk_commands_conversation_id", table_name="helpdesk_commands")
    op.drop_table("helpdesk_commands")
