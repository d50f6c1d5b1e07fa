"""action attempts made

Revision ID: 0018_action_attempts_made
Revises: 0017_history_scan_stalled_runs
Create Date: 2026-12-04

How many attempt rows an action has, kept on the action: the worker numbers the next
attempt from it under the action's row lock instead of asking for the highest number.
Existing actions are counted from their attempt rows.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_action_attempts_made"
down_revision: str | None = "0017_history_scan_stalled_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "actions",
        sa.Column("attempts_made", sa.Integer(), nullable=False, server_default="0"),
    )
    op.execute(
        "UPDATE actions SET attempts_made = ("
        " SELECT COALESCE(MAX(number), 0) FROM action_attempts"
        " WHERE action_attempts.action_id = actions.id)"
    )


def downgrade() -> None:
    op.drop_column("actions", "attempts_made")
