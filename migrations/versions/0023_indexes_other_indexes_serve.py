"""indexes other indexes serve

Revision ID: 0023_indexes_other_indexes_serve
Revises: 0022_cases_by_status
Create Date: 2026-12-04

Drops the indexes whose columns lead another index of the same table: PostgreSQL finds
the same rows through the longer one (a shop's audit events through ``(shop_id, seq)``, an
action's attempts through ``(action_id, number)``), while every insert paid for both. Among
them are the tables the money path writes on every action and every webhook: the audit
events, the action's attempts, the provider's events; and the orders, written by every order
webhook, which kept a shop index beside three that begin with the shop. Dropped and rebuilt
concurrently on PostgreSQL, outside the migration's transaction, as in 0021.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023_indexes_other_indexes_serve"
down_revision: str | None = "0022_cases_by_status"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (name, table, columns) of each index dropped; the comment names the index that serves it.
SERVED = (
    ("ix_audit_events_shop_id", "audit_events", ["shop_id"]),  # (shop_id, seq)
    ("ix_action_attempts_action_id", "action_attempts", ["action_id"]),  # (action_id, number)
    # (shop_id, provider, event_id)
    ("ix_provider_events_shop_id", "provider_events", ["shop_id"]),
    # (shop_id, name), (shop_id, shopify_order_id), (shop_id, payment_id)
    ("ix_orders_shop_id", "orders", ["shop_id"]),
    ("ix_connections_shop_id", "connections", ["shop_id"]),  # (shop_id, provider)
    ("ix_shop_policies_shop_id", "shop_policies", ["shop_id"]),  # (shop_id, version)
    ("ix_staff_members_shop_id", "staff_members", ["shop_id"]),  # (shop_id, user_id)
    # (shop_id, channel, channel_ref)
    ("ix_conversations_shop_id", "conversations", ["shop_id"]),
    # (scan_id, rule, records_key)
    ("ix_history_findings_scan_rule", "history_findings", ["scan_id", "rule"]),
)


def upgrade() -> None:
    with op.get_context().autocommit_block():
        for name, table, _columns in SERVED:
            op.drop_index(name, table_name=table, postgresql_concurrently=True)


def downgrade() -> None:
    with op.get_context().autocommit_block():
        for name, table, columns in SERVED:
            op.create_index(name, table, columns, postgresql_concurrently=True)
