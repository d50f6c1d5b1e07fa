"""money path tables

Revision ID: 0002_money_path_tables
Revises: 0001_create_shops
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_money_path_tables"
down_revision: str | None = "0001_create_shops"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=255), nullable=False),
        sa.Column("case_id", sa.Uuid(), nullable=True),
        sa.Column("action_id", sa.Uuid(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_audit_events_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
        sa.UniqueConstraint("shop_id", "seq", name=op.f("uq_audit_events_shop_id")),
    )
    op.create_index(op.f("ix_audit_events_action_id"), "audit_events", ["action_id"], unique=False)
    op.create_index(op.f("ix_audit_events_case_id"), "audit_events", ["case_id"], unique=False)
    op.create_index(op.f("ix_audit_events_shop_id"), "audit_events", ["shop_id"], unique=False)
    op.create_table(
        "audit_heads",
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_audit_heads_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("shop_id", name=op.f("pk_audit_heads")),
    )
    op.create_table(
        "connections",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=255), nullable=True),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("encrypted_secret", sa.LargeBinary(), nullable=False),
        sa.Column("key_hint", sa.String(length=64), nullable=False),
        sa.Column("encrypted_webhook_secret", sa.LargeBinary(), nullable=True),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_connections_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connections")),
        sa.UniqueConstraint("shop_id", "provider", name=op.f("uq_connections_shop_id")),
    )
    op.create_index(op.f("ix_connections_shop_id"), "connections", ["shop_id"], unique=False)
    op.create_table(
        "customers",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("stripe_customer_id", sa.String(length=255), nullable=True),
        sa.Column("shopify_customer_id", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["shop_id"], ["shops.id"], name=op.f("fk_customers_shop_id_shops")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_customers")),
    )
    op.create_index(op.f("ix_customers_shop_id"), "customers", ["shop_id"], unique=False)
    op.create_table(
        "provider_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=True),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=128), nullable=False),
        sa.Column("object_id", sa.String(length=255), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_provider_events_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_events")),
        sa.UniqueConstraint("provider", "event_id", name=op.f("uq_provider_events_provider")),
    )
    op.create_index(
        op.f("ix_provider_events_object_id"), "provider_events", ["object_id"], unique=False
    )
    op.create_index(
        op.f("ix_provider_events_shop_id"), "provider_events", ["shop_id"], unique=False
    )
    op.create_table(
        "shop_policies",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_shop_policies_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shop_policies")),
        sa.UniqueConstraint("shop_id", "version", name=op.f("uq_shop_policies_shop_id")),
    )
    op.create_index(op.f("ix_shop_policies_shop_id"), "shop_policies", ["shop_id"], unique=False)
    op.create_table(
        "staff_members",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("approval_limits", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_staff_members_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staff_members")),
        sa.UniqueConstraint("shop_id", "user_id", name=op.f("uq_staff_members_shop_id")),
    )
    op.create_index(op.f("ix_staff_members_shop_id"), "staff_members", ["shop_id"], unique=False)
    op.create_table(
        "target_locks",
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("target", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["shop_id"], ["shops.id"], name=op.f("fk_target_locks_shop_id_shops")
        ),
        sa.PrimaryKeyConstraint("shop_id", "provider", "target", name=op.f("pk_target_locks")),
    )
    op.create_table(
        "cases",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("customer_id", sa.Uuid(), nullable=True),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("request_text", sa.Text(), nullable=False),
        sa.Column("identity_level", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["customer_id"], ["customers.id"], name=op.f("fk_cases_customer_id_customers")
        ),
        sa.ForeignKeyConstraint(["shop_id"], ["shops.id"], name=op.f("fk_cases_shop_id_shops")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cases")),
    )
    op.create_index(op.f("ix_cases_shop_id"), "cases", ["shop_id"], unique=False)
    op.create_table(
        "orders",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("customer_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("payment_provider", sa.String(length=32), nullable=False),
        sa.Column("payment_id", sa.String(length=255), nullable=True),
        sa.Column("lines", sa.JSON(), nullable=False),
        sa.Column("fulfilled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["customer_id"], ["customers.id"], name=op.f("fk_orders_customer_id_customers")
        ),
        sa.ForeignKeyConstraint(["shop_id"], ["shops.id"], name=op.f("fk_orders_shop_id_shops")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_orders")),
        sa.UniqueConstraint("shop_id", "name", name=op.f("uq_orders_shop_id")),
    )
    op.create_index(op.f("ix_orders_customer_id"), "orders", ["customer_id"], unique=False)
    op.create_index(op.f("ix_orders_shop_id"), "orders", ["shop_id"], unique=False)
    op.create_table(
        "proposals",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("case_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("target", sa.String(length=255), nullable=False),
        sa.Column("customer_ref", sa.String(length=255), nullable=True),
        sa.Column("amount", sa.Integer(), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=True),
        sa.Column("line_items", sa.JSON(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("proposed_by", sa.String(length=255), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("verdict", sa.JSON(), nullable=False),
        sa.Column("approvals_required", sa.Integer(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_proposals_case_id_cases")),
        sa.ForeignKeyConstraint(["shop_id"], ["shops.id"], name=op.f("fk_proposals_shop_id_shops")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_proposals")),
    )
    op.create_index(op.f("ix_proposals_case_id"), "proposals", ["case_id"], unique=False)
    op.create_index(op.f("ix_proposals_shop_id"), "proposals", ["shop_id"], unique=False)
    op.create_table(
        "actions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("case_id", sa.Uuid(), nullable=False),
        sa.Column("proposal_id", sa.Uuid(), nullable=False),
        sa.Column("proposal_revision", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("target", sa.String(length=255), nullable=False),
        sa.Column("customer_ref", sa.String(length=255), nullable=True),
        sa.Column("amount", sa.Integer(), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=True),
        sa.Column("line_items", sa.JSON(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("provider_ref", sa.String(length=255), nullable=True),
        sa.Column("failure_reason", sa.String(length=255), nullable=True),
        sa.Column("first_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_check_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("checks_made", sa.Integer(), nullable=False),
        sa.Column("approved_by", sa.JSON(), nullable=False),
        sa.Column("approval_expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_actions_case_id_cases")),
        sa.ForeignKeyConstraint(
            ["proposal_id"], ["proposals.id"], name=op.f("fk_actions_proposal_id_proposals")
        ),
        sa.ForeignKeyConstraint(["shop_id"], ["shops.id"], name=op.f("fk_actions_shop_id_shops")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_actions")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_actions_idempotency_key")),
        sa.UniqueConstraint(
            "proposal_id", "proposal_revision", name=op.f("uq_actions_proposal_id")
        ),
    )
    op.create_index(op.f("ix_actions_case_id"), "actions", ["case_id"], unique=False)
    op.create_index(op.f("ix_actions_provider_ref"), "actions", ["provider_ref"], unique=False)
    op.create_index(op.f("ix_actions_shop_id"), "actions", ["shop_id"], unique=False)
    op.create_index(op.f("ix_actions_status"), "actions", ["status"], unique=False)
    op.create_index(op.f("ix_actions_target"), "actions", ["target"], unique=False)
    op.create_table(
        "approvals",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("shop_id", sa.Uuid(), nullable=False),
        sa.Column("proposal_id", sa.Uuid(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("approver", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("consumed_by_action", sa.Uuid(), nullable=True),
        sa.Column("voided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("void_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["proposal_id"], ["proposals.id"], name=op.f("fk_approvals_proposal_id_proposals")
        ),
        sa.ForeignKeyConstraint(["shop_id"], ["shops.id"], name=op.f("fk_approvals_shop_id_shops")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_approvals")),
    )
    op.create_index(op.f("ix_approvals_proposal_id"), "approvals", ["proposal_id"], unique=False)
    op.create_index(op.f("ix_approvals_shop_id"), "approvals", ["shop_id"], unique=False)
    op.create_table(
        "action_attempts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("action_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=32), nullable=True),
        sa.Column("provider_ref", sa.String(length=255), nullable=True),
        sa.Column("provider_status", sa.String(length=32), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["action_id"], ["actions.id"], name=op.f("fk_action_attempts_action_id_actions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_action_attempts")),
        sa.UniqueConstraint("action_id", "number", name=op.f("uq_action_attempts_action_id")),
    )
    op.create_index(
        op.f("ix_action_attempts_action_id"), "action_attempts", ["action_id"], unique=False
    )
    # Existing shops start read-only (protection mode) with the kill switch off.
    op.add_column(
        "shops",
        sa.Column("writes_enabled", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("shops", sa.Column("writes_enabled_by", sa.String(length=255), nullable=True))
    op.add_column(
        "shops", sa.Column("writes_enabled_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "shops", sa.Column("kill_switch", sa.Boolean(), nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    op.drop_column("shops", "kill_switch")
    op.drop_column("shops", "writes_enabled_at")
    op.drop_column("shops", "writes_enabled_by")
    op.drop_column("shops", "writes_enabled")
    op.drop_index(op.f("ix_action_attempts_action_id"), table_name="action_attempts")
    op.drop_table("action_attempts")
    op.drop_index(op.f("ix_approvals_shop_id"), table_name="approvals")
    op.drop_index(op.f("ix_approvals_proposal_id"), table_name="approvals")
    op.drop_table("approvals")
    op.drop_index(op.f("ix_actions_target"), table_name="actions")
    op.drop_index(op.f("ix_actions_status"), table_name="actions")
    op.drop_index(op.f("ix_actions_shop_id"), table_name="actions")
    op.drop_index(op.f("ix_actions_provider_ref"), table_name="actions")
    op.drop_index(op.f("ix_actions_case_id"), table_name="actions")
    op.drop_table("actions")
    op.drop_index(op.f("ix_proposals_shop_id"), table_name="proposals")
    op.drop_index(op.f("ix_proposals_case_id"), table_name="proposals")
    op.drop_table("proposals")
    op.drop_index(op.f("ix_orders_shop_id"), table_name="orders")
    op.drop_index(op.f("ix_orders_customer_id"), table_name="orders")
    op.drop_table("orders")
    op.drop_index(op.f("ix_cases_shop_id"), table_name="cases")
    op.drop_table("cases")
    op.drop_table("target_locks")
    op.drop_index(op.f("ix_staff_members_shop_id"), table_name="staff_members")
    op.drop_table("staff_members")
    op.drop_index(op.f("ix_shop_policies_shop_id"), table_name="shop_policies")
    op.drop_table("shop_policies")
    op.drop_index(op.f("ix_provider_events_shop_id"), table_name="provider_events")
    op.drop_index(op.f("ix_provider_events_object_id"), table_name="provider_events")
    op.drop_table("provider_events")
    op.drop_index(op.f("ix_customers_shop_id"), table_name="customers")
    op.drop_table("customers")
    op.drop_index(op.f("ix_connections_shop_id"), table_name="connections")
    op.drop_table("connections")
    op.drop_table("audit_heads")
    op.drop_index(op.f("ix_audit_events_shop_id"), table_name="audit_events")
    op.drop_index(op.f("ix_audit_events_case_id"), table_name="audit_events")
    op.drop_index(op.f("ix_audit_events_action_id"), table_name="audit_events")
    op.drop_table("audit_events")
