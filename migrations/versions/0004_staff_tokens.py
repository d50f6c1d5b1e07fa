"""staff tokens

Revision ID: 0004_staff_tokens
Revises: 0003_audit_events_append_only
Create Date: 2026-11-30

Staff API tokens move from signed, unrevocable strings to rows that hold only a
hash of the token, with an expiry, a revocation and the last use.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_staff_tokens"
down_revision: str | None = "0003_audit_events_append_only"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "staff_tokens",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=True),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_by", sa.String(length=255), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_staff_tokens_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staff_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_staff_tokens_token_hash")),
    )
    op.create_index(op.f("ix_staff_tokens_shop_id"), "staff_tokens", ["shop_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_staff_tokens_shop_id"), table_name="staff_tokens")
    op.drop_table("staff_tokens")
