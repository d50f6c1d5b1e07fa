"""shopify money links

Revision ID: 0010_shopify_money_links
Revises: 0009_data_exports
Create Date: 2026-12-01

What ties a Shopify order to the money behind it. ``money_ref`` on proposals and actions
names the money a refund gives back, whichever provider is asked: a Shopify order paid
through Stripe and that Stripe payment are one money, so refunds through either are
locked and counted together (every refund until now went through Stripe and named its
payment). ``orders.shopify_order_id`` keys our copy of a customer's Shopify orders.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_shopify_money_links"
down_revision: str | None = "0009_data_exports"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for table in ("proposals", "actions"):
        op.add_column(table, sa.Column("money_ref", sa.String(length=255), nullable=True))
        op.execute(f"UPDATE {table} SET money_ref = target WHERE kind = 'refund'")  # noqa: S608
    op.create_index("ix_actions_shop_money_ref", "actions", ["shop_id", "money_ref"])
    op.add_column("orders", sa.Column("shopify_order_id", sa.String(length=255), nullable=True))
    # A unique index rather than a constraint: SQLite cannot add constraints in place.
    op.create_index(
        "uq_orders_shop_shopify_order_id", "orders", ["shop_id", "shopify_order_id"], unique=True
    )


def downgrade() -> None:
    op.drop_index("uq_orders_shop_shopify_order_id", table_name="orders")
    op.drop_column("orders", "shopify_order_id")
    op.drop_index("ix_actions_shop_money_ref", table_name="actions")
    for table in ("actions", "proposals"):
        op.drop_column(table, "money_ref")
