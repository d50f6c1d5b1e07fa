"""cases by status

Revision ID: 0022_cases_by_status
Revises: 0021_indexes_for_growing_shops
Create Date: 2026-12-04

The cases API's page of one status (``GET /api/cases?status=...``) read the shop's cases
newest first and threw away those in any other status until it had a page: for a status a
few cases are in, every case the shop ever had. It now reads the status's cases only.
Built and dropped concurrently on PostgreSQL, outside the migration's transaction, as in
0021.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0022_cases_by_status"
down_revision: str | None = "0021_indexes_for_growing_shops"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ix_cases_shop_id_status_updated_at"


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.create_index(
            NAME, "cases", ["shop_id", "status", "updated_at"], postgresql_concurrently=True
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index(NAME, table_name="cases", postgresql_concurrently=True)
