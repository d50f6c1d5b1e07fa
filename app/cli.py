"""Flask CLI commands: ``flask --app app db-upgrade`` and friends."""

from __future__ import annotations

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

from app import migrations


def register_commands(app: Flask) -> None:
    app.cli.add_command(db_upgrade)


@click.command("db-upgrade")
@click.option("--revision", default="head", show_default=True)
@with_appcontext
def db_upgrade(revision: str) -> None:
    """Apply Alembic migrations to the configured database."""
    url = current_app.config["CASEWARD_SETTINGS"].database_url
    migrations.upgrade(url, revision)
    click.echo(f"database at {migrations.head_revision() if revision == 'head' else revision}")
