"""chat messages owed a draft

Revision ID: 0025_chat_messages_owed_a_draft
Revises: 0024_unanswered_privacy_requests
Create Date: 2026-12-05

A shopper's chat message now says since when it is owed a draft, and its drafting job
clears the mark, so a job lost between the message's commit and its enqueue is queued again
by the sweep (``app/drafting/jobs.py::drafts_owed``). Messages kept before owe nothing. The
sweep reads the marks through an index of the marked messages alone, built and dropped
concurrently on PostgreSQL, outside the migration's transaction, as in 0021.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025_chat_messages_owed_a_draft"
down_revision: str | None = "0024_unanswered_privacy_requests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ix_conversation_messages_draft_owed"
OWED = "draft_owed_since IS NOT NULL"


def upgrade() -> None:
    op.add_column(
        "conversation_messages",
        sa.Column("draft_owed_since", sa.DateTime(timezone=True), nullable=True),
    )
    with op.get_context().autocommit_block():
        op.create_index(
            NAME,
            "conversation_messages",
            ["draft_owed_since"],
            postgresql_where=sa.text(OWED),
            sqlite_where=sa.text(OWED),
            postgresql_concurrently=True,
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index(NAME, table_name="conversation_messages", postgresql_concurrently=True)
    op.drop_column("conversation_messages", "draft_owed_since")
