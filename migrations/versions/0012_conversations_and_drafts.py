"""conversations and drafts

Revision ID: 0012_conversations_and_drafts
Revises: 0011_reason_sentences
Create Date: 2026-12-01

Conversations on every channel (storefront chat, helpdesk ticket, admin) with their
participants and messages; how sure we are who the shopper is and how that was
established; one-time codes sent to an order's email (kept as an HMAC only); the case a
conversation feeds; one row per drafting run with its token use; and each order's
shipments (carrier, tracking, estimated delivery), so a drafter can say where it is.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_conversations_and_drafts"
down_revision: str | None = "0011_reason_sentences"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("channel_ref", sa.String(255), nullable=False),
        sa.Column("customer_id", sa.Uuid(), sa.ForeignKey("customers.id"), nullable=True),
        sa.Column("identity_level", sa.String(16), nullable=False),
        sa.Column("identity_method", sa.String(16), nullable=True),
        sa.Column("identity_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("storefront_customer_ref", sa.String(64), nullable=True),
        sa.Column("case_id", sa.Uuid(), sa.ForeignKey("cases.id"), nullable=True),
        sa.Column("order_id", sa.Uuid(), sa.ForeignKey("orders.id"), nullable=True),
        sa.Column("locale", sa.String(16), nullable=True),
        sa.Column("wants_person", sa.Boolean(), nullable=False),
        sa.Column("pending_step", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("shop_id", "channel", "channel_ref"),
    )
    op.create_index("ix_conversations_shop_id", "conversations", ["shop_id"])
    op.create_table(
        "conversation_participants",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("conversation_id", sa.Uuid(), sa.ForeignKey("conversations.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("ref", sa.String(255), nullable=False),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("conversation_id", "kind", "ref"),
    )
    op.create_index(
        "ix_conversation_participants_shop_id", "conversation_participants", ["shop_id"]
    )
    op.create_table(
        "conversation_messages",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("conversation_id", sa.Uuid(), sa.ForeignKey("conversations.id"), nullable=False),
        sa.Column("author", sa.String(16), nullable=False),
        sa.Column("author_ref", sa.String(255), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("channel_message_id", sa.String(255), nullable=True),
        sa.Column("about_action_id", sa.Uuid(), sa.ForeignKey("actions.id"), nullable=True),
        sa.Column("about_status", sa.String(32), nullable=True),
        sa.Column("sentence", sa.JSON(), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("conversation_id", "channel_message_id"),
        sa.UniqueConstraint("about_action_id", "about_status"),
    )
    op.create_index("ix_conversation_messages_shop_id", "conversation_messages", ["shop_id"])
    op.create_index(
        "ix_conversation_messages_conversation",
        "conversation_messages",
        ["conversation_id", "created_at"],
    )
    undelivered = sa.text("delivered_at IS NULL AND author IN ('caseward', 'staff')")
    op.create_index(
        "ix_conversation_messages_undelivered",
        "conversation_messages",
        ["shop_id"],
        postgresql_where=undelivered,
        sqlite_where=undelivered,
    )
    op.create_table(
        "verification_codes",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("conversation_id", sa.Uuid(), sa.ForeignKey("conversations.id"), nullable=False),
        sa.Column("order_id", sa.Uuid(), sa.ForeignKey("orders.id"), nullable=True),
        sa.Column("code_digest", sa.String(64), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_verification_codes_shop_id", "verification_codes", ["shop_id"])
    op.create_index(
        "ix_verification_codes_conversation",
        "verification_codes",
        ["conversation_id", "created_at"],
    )
    with op.batch_alter_table("cases") as batch:
        batch.add_column(sa.Column("conversation_id", sa.Uuid(), nullable=True))
        batch.create_foreign_key(
            "fk_cases_conversation_id", "conversations", ["conversation_id"], ["id"]
        )
        batch.create_index("ix_cases_conversation_id", ["conversation_id"])
    op.create_table(
        "case_drafts",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("case_id", sa.Uuid(), sa.ForeignKey("cases.id"), nullable=False),
        sa.Column("drafter", sa.String(16), nullable=False),
        sa.Column("model", sa.String(64), nullable=True),
        sa.Column("next_step", sa.String(32), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("failure", sa.Text(), nullable=True),
        sa.Column("proposal_id", sa.Uuid(), sa.ForeignKey("proposals.id"), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_read_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_write_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_case_drafts_shop_id", "case_drafts", ["shop_id"])
    op.create_index("ix_case_drafts_case_id", "case_drafts", ["case_id"])
    # Orders copied before this revision have no shipments until their next refresh.
    op.add_column(
        "orders",
        sa.Column("shipments", sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
    )
    with op.batch_alter_table("orders") as batch:
        batch.alter_column("shipments", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("orders") as batch:
        batch.drop_column("shipments")
    op.drop_table("case_drafts")
    with op.batch_alter_table("cases") as batch:
        batch.drop_index("ix_cases_conversation_id")
        batch.drop_constraint("fk_cases_conversation_id", type_="foreignkey")
        batch.drop_column("conversation_id")
    op.drop_table("verification_codes")
    op.drop_table("conversation_messages")
    op.drop_table("conversation_participants")
    op.drop_table("conversations")
