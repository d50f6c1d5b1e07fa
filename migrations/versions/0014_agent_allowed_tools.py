"""agent allowed tools

Revision ID: 0014_agent_allowed_tools
Revises: 0013_agent_credentials
Create Date: 2026-12-01

Which MCP tools an agent's credential may call. Credentials issued before this revision
keep every tool that existed then, which is what they could call. And an agent's draft
reply, kept with the case's drafting runs for a person to send: its text and the agent's
credential.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_agent_allowed_tools"
down_revision: str | None = "0013_agent_credentials"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TOOLS_BEFORE = '["action_status", "find_case", "propose_action", "read_case"]'


def upgrade() -> None:
    op.add_column(
        "agent_credentials",
        sa.Column("allowed_tools", sa.JSON(), nullable=False, server_default=_TOOLS_BEFORE),
    )
    with op.batch_alter_table("agent_credentials") as batch:
        batch.alter_column("allowed_tools", server_default=None)
    with op.batch_alter_table("case_drafts") as batch:
        batch.add_column(sa.Column("reply", sa.Text(), nullable=True))
        batch.add_column(sa.Column("agent_id", sa.Uuid(), nullable=True))
        batch.create_foreign_key(
            "fk_case_drafts_agent_id", "agent_credentials", ["agent_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("case_drafts") as batch:
        batch.drop_constraint("fk_case_drafts_agent_id", type_="foreignkey")
        batch.drop_column("agent_id")
        batch.drop_column("reply")
    with op.batch_alter_table("agent_credentials") as batch:
        batch.drop_column("allowed_tools")
