"""data exports

Revision ID: 0009_data_exports
Revises: 0008_shopify_installs
Create Date: 2026-12-01

A customer's data, exported on request (Shopify's ``customers/data_request``) for the
shop owner to hand over, kept encrypted until it is fetched or the customer is erased.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_data_exports"
down_revision: str | None = "0008_shopify_installs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "data_exports",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("request_ref", sa.String(length=255), nullable=False),
        sa.Column("customer_ids", sa.JSON(), nullable=False),
        sa.Column("encrypted_content", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_data_exports_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_exports")),
    )
    op.create_index(op.f("ix_data_exports_shop_id"), "data_exports", ["shop_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_data_exports_shop_id"), table_name="data_exports")
    op.drop_table("data_exports")
