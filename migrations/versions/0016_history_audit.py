"""history audit

Revision ID: 0016_history_audit
Revises: 0015_merchant_endpoint
Create Date: 2026-12-01

The read-only audit of a shop's past money actions: each scan of a provider's history
(its window, each stream's cursor and counts, so a restarted scan resumes), the records it
read, once per scan and provider id, and what the checks found in them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_history_audit"
down_revision: str | None = "0015_merchant_endpoint"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "history_scans",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("provider", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("window_days", sa.Integer(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("streams", sa.JSON(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.String(255), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_sentence", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("not_before", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_history_scans_shop_provider", "history_scans", ["shop_id", "provider"])
    op.create_table(
        "history_records",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("scan_id", sa.Uuid(), sa.ForeignKey("history_scans.id"), nullable=False),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("provider", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("record_id", sa.String(255), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("customer", sa.String(255), nullable=True),
        sa.Column("amount", sa.Integer(), nullable=True),
        sa.Column("currency", sa.String(3), nullable=True),
        sa.Column("percent_off", sa.Integer(), nullable=True),
        sa.Column("payment", sa.String(255), nullable=True),
        sa.Column("payment_amount", sa.Integer(), nullable=True),
        sa.Column("payment_disputed", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(32), nullable=True),
        sa.Column("caseward_action_id", sa.String(64), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.UniqueConstraint("scan_id", "record_id"),
    )
    op.create_index(
        "ix_history_records_scan_kind_created", "history_records", ["scan_id", "kind", "created"]
    )
    op.create_index("ix_history_records_shop_id", "history_records", ["shop_id"])
    op.create_table(
        "history_findings",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("scan_id", sa.Uuid(), sa.ForeignKey("history_scans.id"), nullable=False),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("rule", sa.String(48), nullable=False),
        sa.Column("records", sa.JSON(), nullable=False),
        sa.Column("records_key", sa.String(64), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("customer", sa.String(255), nullable=True),
        sa.Column("money_at_risk", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("reason", sa.JSON(), nullable=False),
        sa.UniqueConstraint("scan_id", "rule", "records_key"),
    )
    op.create_index("ix_history_findings_scan_rule", "history_findings", ["scan_id", "rule"])
    op.create_index("ix_history_findings_shop_id", "history_findings", ["shop_id"])


def downgrade() -> None:
    op.drop_table("history_findings")
    op.drop_table("history_records")
    op.drop_table("history_scans")
