"""unanswered privacy requests

Revision ID: 0024_unanswered_privacy_requests
Revises: 0023_indexes_other_indexes_serve
Create Date: 2026-12-04

The sweep now queues a stored privacy request that is still unanswered and has no job
(``app/privacy/jobs.py::unanswered_requests``), every few seconds. It reads them through an
index of those requests alone, so it never reads every webhook every shop was sent. The
condition is written out as it stood at this revision. Built and dropped concurrently on
PostgreSQL, outside the migration's transaction, as in 0021.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024_unanswered_privacy_requests"
down_revision: str | None = "0023_indexes_other_indexes_serve"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ix_provider_events_unanswered_privacy"
UNANSWERED = (
    "provider = 'shopify' AND type IN ('customers/data_request', 'customers/redact', "
    "'shop/redact') AND (payload ->> 'answered') IS NULL"
)


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.create_index(
            NAME,
            "provider_events",
            ["received_at"],
            postgresql_where=sa.text(UNANSWERED),
            sqlite_where=sa.text(UNANSWERED),
            postgresql_concurrently=True,
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index(NAME, table_name="provider_events", postgresql_concurrently=True)
