"""merchant endpoint

Revision ID: 0015_merchant_endpoint
Revises: 0014_agent_allowed_tools
Create Date: 2026-12-01

The merchant's own HTTPS endpoint as a provider: where its connection sends requests
(``connections.endpoint_url``; the signing secrets are in the connection's encrypted
secret), and each customer's id there (``customers.merchant_customer_id``), which money
sent through that endpoint may only reach. Both are empty for every row until now.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_merchant_endpoint"
down_revision: str | None = "0014_agent_allowed_tools"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("connections", sa.Column("endpoint_url", sa.String(length=255), nullable=True))
    op.add_column(
        "customers", sa.Column("merchant_customer_id", sa.String(length=255), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("customers", "merchant_customer_id")
    op.drop_column("connections", "endpoint_url")
