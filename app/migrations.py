"""Alembic, driven from code: the same revisions for the CLI, the app and the tests."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection

MIGRATIONS_PATH = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_PATH))
    config.set_main_option("file_template", "%%(rev)s")
    # ConfigParser interpolation would eat the '%' of URL-encoded passwords.
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)


def autogenerate(database_url: str, message: str) -> None:
    slug = "_".join(message.lower().split())
    number = len(list((MIGRATIONS_PATH / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))) + 1
    command.revision(
        alembic_config(database_url),
        message=message,
        autogenerate=True,
        rev_id=f"{number:04d}_{slug}",
    )


@lru_cache(maxsize=1)
def _scripts() -> ScriptDirectory:
    return ScriptDirectory(str(MIGRATIONS_PATH))


def head_revision() -> str | None:
    return _scripts().get_current_head()


def schema_is_behind(revision: str | None) -> bool:
    """Whether a database at ``revision`` lacks a revision this code needs. A revision this
    code does not know was made by a newer release, which migrates compatibly (add first,
    drop a release later): this code still runs on it, so a deploy's old processes stay up
    while the new ones roll out."""
    if revision == head_revision():
        return False
    if revision is None:
        return True
    try:
        known = _scripts().get_revision(revision)
    except CommandError:
        return False
    return known is not None


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()
