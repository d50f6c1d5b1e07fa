"""typed audit actors

Revision ID: 0007_typed_audit_actors
Revises: 0006_webhook_dedupe_escalation
Create Date: 2026-12-01

Each audit event names the kind of party that acted (staff, customer, agent, system) and
the surface it came through (the Shopify admin, the staff API, a worker, ...), beside
the existing ``actor`` reference. Events written before this revision keep both empty,
and their seals do not cover them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_typed_audit_actors"
down_revision: str | None = "0006_webhook_dedupe_escalation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("actor_kind", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("actor_surface", sa.String(length=32), nullable=True))


def downgrade() -> None:
    # Dropped in place, never by rebuilding the table (SQLite's way for older versions):
    # a rebuilt table would lose its append-only triggers (revision 0003).
    with op.batch_alter_table("audit_events", recreate="never") as batch:
        batch.drop_column("actor_surface")
        batch.drop_column("actor_kind")
