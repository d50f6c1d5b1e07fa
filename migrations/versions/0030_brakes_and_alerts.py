"""brakes and alerts

Revision ID: 0030_brakes_and_alerts
Revises: 0029_shop_currency
Create Date: 2026-12-07

A shop's automatic brakes (``app/execution/brakes.py``): ceilings on the money and the
actions sent per hour and per day, the breaker's limits and what it has counted, and the
tripped state. What the owner is told (``app/alerts/``): one alert per cause, written with
its cause and delivered by email and Slack afterwards; the sweep finds those not delivered
yet through an index of them alone. The Slack webhook's address and signing secret are
stored encrypted. Shops have no brakes row until their first send, which makes it with the
defaults.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030_brakes_and_alerts"
down_revision: str | None = "0029_shop_currency"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNDELIVERED = "delivered_at IS NULL"


def upgrade() -> None:
    op.create_table(
        "shop_brakes",
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), primary_key=True),
        sa.Column("money_per_hour", sa.JSON(), nullable=False),
        sa.Column("money_per_day", sa.JSON(), nullable=False),
        sa.Column("actions_per_hour", sa.Integer(), nullable=True),
        sa.Column("actions_per_day", sa.Integer(), nullable=True),
        sa.Column("failures_in_a_row", sa.Integer(), nullable=True),
        sa.Column("error_percent", sa.Integer(), nullable=True),
        sa.Column("error_window", sa.Integer(), nullable=False),
        sa.Column("bad_in_a_row", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("recent_sends", sa.String(100), nullable=False, server_default=""),
        sa.Column("tripped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("tripped_rule", sa.String(32), nullable=True),
        sa.Column("tripped_reason", sa.JSON(), nullable=True),
        sa.Column("tripped_action_id", sa.Uuid(), nullable=True),
        sa.Column("resumed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resumed_by", sa.String(255), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("changed_by", sa.String(255), nullable=True),
    )
    op.create_table(
        "alerts",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("cause", sa.String(64), nullable=False),
        sa.Column("case_id", sa.Uuid(), sa.ForeignKey("cases.id"), nullable=True),
        sa.Column("action_id", sa.Uuid(), sa.ForeignKey("actions.id"), nullable=True),
        sa.Column("amount", sa.Integer(), nullable=True),
        sa.Column("currency", sa.String(3), nullable=True),
        sa.Column("facts", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("email_owed", sa.Boolean(), nullable=False),
        sa.Column("emailed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("slack_owed", sa.Boolean(), nullable=False),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("shop_id", "kind", "cause"),
    )
    op.create_index(
        "ix_alerts_undelivered_next_attempt_at",
        "alerts",
        ["next_attempt_at"],
        postgresql_where=sa.text(UNDELIVERED),
        sqlite_where=sa.text(UNDELIVERED),
    )
    op.create_table(
        "alert_settings",
        sa.Column("shop_id", sa.Uuid(), sa.ForeignKey("shops.id"), primary_key=True),
        sa.Column("encrypted_slack_url", sa.LargeBinary(), nullable=True),
        sa.Column("slack_url_hint", sa.String(64), nullable=True),
        sa.Column("encrypted_signing_secret", sa.LargeBinary(), nullable=True),
        sa.Column("slack_kinds", sa.JSON(), nullable=False),
        sa.Column("changed_by", sa.String(255), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("alert_settings")
    op.drop_index("ix_alerts_undelivered_next_attempt_at", table_name="alerts")
    op.drop_table("alerts")
    op.drop_table("shop_brakes")
