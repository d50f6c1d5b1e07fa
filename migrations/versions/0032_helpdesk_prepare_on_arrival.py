"""helpdesk cases prepared as the customer's message arrives

Revision ID: 0032_helpdesk_prepare_on_arrival
Revises: 0031_proposal_guard_inputs
Create Date: 2026-12-07

Whether Caseward drafts a helpdesk ticket's case into an internal note as each customer
message arrives, as the storefront chat drafts each message, so that an agent opening the
ticket finds the case prepared and approves with one macro. On for every Gorgias account,
those connected before included; an owner may turn it off (drafting then waits for the
"prepare case" macro).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032_helpdesk_prepare_on_arrival"
down_revision: str | None = "0031_proposal_guard_inputs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "connections",
        sa.Column("prepare_on_arrival", sa.Boolean(), nullable=False, server_default=sa.true()),
    )


def downgrade() -> None:
    with op.batch_alter_table("connections") as batch:
        batch.drop_column("prepare_on_arrival")
