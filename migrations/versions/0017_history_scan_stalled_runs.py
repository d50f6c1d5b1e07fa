"""history scan stalled runs

Revision ID: 0017_history_scan_stalled_runs
Revises: 0016_history_audit
Create Date: 2026-12-01

How many runs of a scan in a row ended without the provider answering a page: a scan that
fails the same way on every resume (a provider down for hours, an error in Caseward's own
step) ends ``failed`` with a reason instead of being resumed forever.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_history_scan_stalled_runs"
down_revision: str | None = "0016_history_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "history_scans",
        sa.Column("stalled_runs", sa.Integer(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_column("history_scans", "stalled_runs")
