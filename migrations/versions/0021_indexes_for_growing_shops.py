"""indexes for growing shops

Revision ID: 0021_indexes_for_growing_shops
Revises: 0020_orders_by_payment
Create Date: 2026-12-04

Lookups that PostgreSQL answered by reading every row of a shop, or of the whole table,
now read by index. Measured in a shop of 50,000 customers and orders, 30,000 cases and
proposals and 29,000 actions (median, before and after):

- a customer by Shopify id (every Shopify order webhook, signed-in chats): 13.5 to 0.2 ms;
- a customer by email in any case (each helpdesk call): 37 to 0.2 ms; with the cases by
  customer, an agent's case search: 63 to 0.2 ms;
- calls left unfinished (the sweep, every few seconds, over every shop's history): 6.4 to
  0.2 ms, with only the unfinished calls indexed;
- the queue's page of cases: 75 to 6 ms; the cases API: 50 to 3 ms; the actions API: 84 to
  4 ms; the codes asked for one order: 4.5 to 0.2 ms;
- the caps' sums (46-70 ms) read the period's actions only, not the shop's whole history.

Each index that starts with the shop replaces the shop's own index on its table, which it
serves as well. Built and dropped concurrently on PostgreSQL, outside the migration's
transaction, so the tables keep being written while they build.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_indexes_for_growing_shops"
down_revision: str | None = "0020_orders_by_payment"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNFINISHED = sa.text("finished_at IS NULL")

# (name, table, columns, partial) for each new index.
NEW = (
    ("ix_actions_shop_id_created_at", "actions", ["shop_id", "created_at"], None),
    ("ix_action_attempts_unfinished_started_at", "action_attempts", ["started_at"], UNFINISHED),
    ("ix_proposals_shop_id_status", "proposals", ["shop_id", "status"], None),
    ("ix_cases_shop_id_updated_at", "cases", ["shop_id", "updated_at"], None),
    ("ix_cases_customer_id", "cases", ["customer_id"], None),
    (
        "ix_customers_shop_id_shopify_customer_id",
        "customers",
        ["shop_id", "shopify_customer_id"],
        None,
    ),
    ("ix_customers_shop_id_lower_email", "customers", ["shop_id", sa.text("lower(email)")], None),
    (
        "ix_verification_codes_order_id_created_at",
        "verification_codes",
        ["order_id", "created_at"],
        None,
    ),
)
# The shop's own indexes the new ones serve as well: (name, table, column).
REPLACED = (
    ("ix_actions_shop_id", "actions", "shop_id"),
    ("ix_proposals_shop_id", "proposals", "shop_id"),
    ("ix_cases_shop_id", "cases", "shop_id"),
    ("ix_customers_shop_id", "customers", "shop_id"),
)


def upgrade() -> None:
    with op.get_context().autocommit_block():
        for name, table, columns, where in NEW:
            op.create_index(
                name,
                table,
                columns,
                postgresql_where=where,
                sqlite_where=where,
                postgresql_concurrently=True,
            )
        for name, table, _column in REPLACED:
            op.drop_index(name, table_name=table, postgresql_concurrently=True)


def downgrade() -> None:
    with op.get_context().autocommit_block():
        for name, table, column in REPLACED:
            op.create_index(name, table, [column], postgresql_concurrently=True)
        for name, table, _columns, _where in NEW:
            op.drop_index(name, table_name=table, postgresql_concurrently=True)
