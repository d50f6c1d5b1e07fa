"""shopify installs

Revision ID: 0008_shopify_installs
Revises: 0007_typed_audit_actors
Create Date: 2026-12-01

The app's offline access token for each installed shop (from Shopify's token
exchange), encrypted, with its expiry and refresh token; deleted on uninstall.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_shopify_installs"
down_revision: str | None = "0007_typed_audit_actors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shopify_installs",
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("encrypted_access_token", sa.LargeBinary(), nullable=False),
        sa.Column("scopes", sa.String(length=1024), nullable=False),
        sa.Column("access_token_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("encrypted_refresh_token", sa.LargeBinary(), nullable=True),
        sa.Column("refresh_token_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("installed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("refreshed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_shopify_installs_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("shop_id", name=op.f("pk_shopify_installs")),
    )


def downgrade() -> None:
    op.drop_table("shopify_installs")
