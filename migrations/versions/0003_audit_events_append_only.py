"""audit events append only

Revision ID: 0003_audit_events_append_only
Revises: 0002_money_path_tables
Create Date: 2026-11-29

The hash chain makes tampering visible; this makes the database refuse ordinary
edits and deletions of audit events outright, so a bug cannot rewrite history.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003_audit_events_append_only"
down_revision: str | None = "0002_money_path_tables"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "audit events are append-only"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"""
            CREATE FUNCTION audit_events_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION '{MESSAGE}';
            END;
            $$ LANGUAGE plpgsql
            """
        )
        op.execute(
            "CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events "
            "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()"
        )
    else:
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
                f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_events_append_only ON audit_events")
        op.execute("DROP FUNCTION audit_events_append_only()")
    else:
        for verb in ("update", "delete"):
            op.execute(f"DROP TRIGGER audit_events_no_{verb}")
