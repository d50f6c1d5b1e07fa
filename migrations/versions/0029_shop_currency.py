"""the shop's currency

Revision ID: 0029_shop_currency
Revises: 0028_staff_member_names
Create Date: 2026-12-06

The currency the store sells in, as Shopify reports it (``shop { currencyCode }``) when the
app is installed or its offline token refreshed, so the policy's form starts in it. Shops
installed before have none until their next install or token refresh.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_shop_currency"
down_revision: str | None = "0028_staff_member_names"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("shops", sa.Column("currency", sa.String(3), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("shops") as batch:
        batch.drop_column("currency")
