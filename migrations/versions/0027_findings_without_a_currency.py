"""history findings without a currency

Revision ID: 0027_findings_without_a_currency
Revises: 0026_claims_and_refused_words
Create Date: 2026-12-06

A finding about a record that names no currency (a percent discount, a subscription
change) puts no money at risk. When nothing else in its scan or the shop's policy names a
currency either, it now has none, rather than dollars made up. Findings kept before all
have one.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027_findings_without_a_currency"
down_revision: str | None = "0026_claims_and_refused_words"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("history_findings") as batch:
        batch.alter_column("currency", existing_type=sa.String(3), nullable=True)


def downgrade() -> None:
    # ISO 4217's code for "no currency": such a finding has nothing at risk.
    op.execute("UPDATE history_findings SET currency = 'xxx' WHERE currency IS NULL")
    with op.batch_alter_table("history_findings") as batch:
        batch.alter_column("currency", existing_type=sa.String(3), nullable=False)
