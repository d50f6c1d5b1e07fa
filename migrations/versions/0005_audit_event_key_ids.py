"""audit event key ids

Revision ID: 0005_audit_event_key_ids
Revises: 0004_staff_tokens
Create Date: 2026-11-30

Audit events are chained with a keyed hash (HMAC-SHA256) whose key lives outside
the database; each event names the id of the key that sealed it, so keys can be
rotated. Events written before this revision have no key id and keep their plain
SHA-256 links.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_audit_event_key_ids"
down_revision: str | None = "0004_staff_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("key_id", sa.String(length=32), nullable=True))


def downgrade() -> None:
    # Dropped in place, never by rebuilding the table (SQLite's way for older versions):
    # a rebuilt table would lose its append-only triggers (revision 0003).
    with op.batch_alter_table("audit_events", recreate="never") as batch:
        batch.drop_column("key_id")
