"""agent credentials

Revision ID: 0013_agent_credentials
Revises: 0012_conversations_and_drafts
Create Date: 2026-12-01

Credentials for agents that propose through the MCP server: only the SHA-256 of the
secret, a prefix people recognise, the action kinds the agent may propose, an optional
ceiling per currency, and the issue, revocation and last use.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_agent_credentials"
down_revision: str | None = "0012_conversations_and_drafts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agent_credentials",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("secret_digest", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("allowed_kinds", sa.JSON(), nullable=False),
        sa.Column("ceiling", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_agent_credentials_shop_id", "agent_credentials", ["shop_id"])


def downgrade() -> None:
    op.drop_table("agent_credentials")
