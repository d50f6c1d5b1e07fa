"""reason sentences

Revision ID: 0011_reason_sentences
Revises: 0010_shopify_money_links
Create Date: 2026-12-01

Why an action stopped and why an approval was voided, kept as the sentence Caseward said
(its catalogue message and values, see ``app/words.py``) beside the English already
stored, so the admin shows them in its reader's language. Rows written before have only
the English, which is shown as it is.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_reason_sentences"
down_revision: str | None = "0010_shopify_money_links"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("actions", sa.Column("status_sentence", sa.JSON(), nullable=True))
    op.add_column("approvals", sa.Column("void_sentence", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("approvals", "void_sentence")
    op.drop_column("actions", "status_sentence")
