"""drafts keep claims and refused words; cases flag instruction attempts

Revision ID: 0026_claims_and_refused_words
Revises: 0025_chat_messages_owed_a_draft
Create Date: 2026-12-06

A drafting run now keeps the customer's claim it stated (which lines, how many, why) and,
when the deny-by-default check refused the drafter's own words, those words for staff to
read. A case says since when one of its customer's messages tried to instruct the
assistant ("SYSTEM:", "the owner approved"), so the admin, the operator page and the
helpdesk sidebar can flag it. All three are empty for what was kept before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026_claims_and_refused_words"
down_revision: str | None = "0025_chat_messages_owed_a_draft"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("case_drafts", sa.Column("claim", sa.JSON(), nullable=True))
    op.add_column("case_drafts", sa.Column("refused_text", sa.Text(), nullable=True))
    op.add_column(
        "cases",
        sa.Column("instruction_attempt_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("cases", "instruction_attempt_at")
    op.drop_column("case_drafts", "refused_text")
    op.drop_column("case_drafts", "claim")
