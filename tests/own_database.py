"""A test's (or a module's) database, from the one migrated once for the run."""

from __future__ import annotations

import shutil
from pathlib import Path


def own_database(migrated_url: str, folder: Path) -> str:
    """The shared PostgreSQL database as it is (emptied after each use), or a private copy
    of the migrated SQLite file in ``folder``: SQLite cannot empty the audit table past
    its append-only triggers, and a copy is cheaper than migrating."""
    if not migrated_url.startswith("sqlite:///"):
        return migrated_url
    copy = folder / "caseward.db"
    shutil.copyfile(migrated_url.removeprefix("sqlite:///"), copy)
    return f"sqlite:///{copy}"
