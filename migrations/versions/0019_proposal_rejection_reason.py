"""proposal rejection reason

Revision ID: 0019_proposal_rejection_reason
Revises: 0018_action_attempts_made
Create Date: 2026-12-04

The words a person gave for rejecting a proposal, kept on the proposal, where an erasure
reaches them, instead of in the audit chain, which is never erased. Rejections recorded
before keep their words in their audit events.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_proposal_rejection_reason"
down_revision: str | None = "0018_action_attempts_made"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("proposals", sa.Column("rejection_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("proposals", "rejection_reason")
