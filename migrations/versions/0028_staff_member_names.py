"""staff members' names

Revision ID: 0028_staff_member_names
Revises: 0027_findings_without_a_currency
Create Date: 2026-12-06

A staff member's name as people know them (Shopify's first and last name, from the online
token exchange at their first visit), so the admin says who approved instead of a user id.
Members admitted before have none: the pages show their email, else their id.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028_staff_member_names"
down_revision: str | None = "0027_findings_without_a_currency"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("staff_members", sa.Column("name", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("staff_members") as batch:
        batch.drop_column("name")
