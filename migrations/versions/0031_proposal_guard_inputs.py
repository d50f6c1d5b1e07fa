"""proposal guard inputs

Revision ID: 0031_proposal_guard_inputs
Revises: 0030_brakes_and_alerts
Create Date: 2026-12-07

What each proposal's checks were asked with when its verdict was stored (the proposal,
the provider's facts, our actions around it, the order, the caps' spending, the time), so
the policy what-if can replay them under another policy. Proposals checked before have
none: the what-if rebuilds theirs from the proposal, the order and our actions. The what-if
reads a shop's proposals of the last 90 days by their time, through their own index.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0031_proposal_guard_inputs"
down_revision: str | None = "0030_brakes_and_alerts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("proposals", sa.Column("guard_inputs", sa.JSON(), nullable=True))
    op.create_index("ix_proposals_shop_id_created_at", "proposals", ["shop_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_proposals_shop_id_created_at", table_name="proposals")
    with op.batch_alter_table("proposals") as batch:
        batch.drop_column("guard_inputs")
