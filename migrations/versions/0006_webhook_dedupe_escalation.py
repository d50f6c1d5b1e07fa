"""webhook events per shop, action escalation, shop uninstall

Revision ID: 0006_webhook_dedupe_escalation
Revises: 0005_audit_event_key_ids
Create Date: 2026-11-30

Two shops on one Stripe account each receive their own delivery of an event, so a
provider event is kept once per shop, not once per provider. An action that stays
unclear too long is put in front of a person once: ``escalated_at`` says when. A
shop that uninstalled the app keeps its evidence; ``uninstalled_at`` stops its work.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_webhook_dedupe_escalation"
down_revision: str | None = "0005_audit_event_key_ids"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("provider_events") as batch:
        batch.drop_constraint("uq_provider_events_provider", type_="unique")
        batch.create_unique_constraint(
            "uq_provider_events_shop_id", ["shop_id", "provider", "event_id"]
        )
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("escalated_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("shops") as batch:
        batch.add_column(sa.Column("uninstalled_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("shops") as batch:
        batch.drop_column("uninstalled_at")
    with op.batch_alter_table("actions") as batch:
        batch.drop_column("escalated_at")
    with op.batch_alter_table("provider_events") as batch:
        batch.drop_constraint("uq_provider_events_shop_id", type_="unique")
        batch.create_unique_constraint("uq_provider_events_provider", ["provider", "event_id"])
