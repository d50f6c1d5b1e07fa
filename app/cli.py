"""Flask CLI commands (``flask --app app <command>``)."""

from __future__ import annotations

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

from app import migrations
from app.audit_commands import audit_export, audit_verify
from app.staff.commands import COMMANDS as STAFF_COMMANDS


def register_commands(app: Flask) -> None:
    for command in (db_upgrade, db_revision, audit_verify, audit_export, *STAFF_COMMANDS):
        app.cli.add_command(command)


@click.command("db-upgrade")
@click.option("--revision", default="head", show_default=True)
@with_appcontext
def db_upgrade(revision: str) -> None:
    """Apply Alembic migrations to the configured database."""
    url = current_app.config["CASEWARD_SETTINGS"].database_url
    migrations.upgrade(url, revision)
    click.echo(f"database at {migrations.head_revision() if revision == 'head' else revision}")


@click.command("db-revision")
@click.option("-m", "--message", required=True, help="What the revision does, as a short phrase.")
@with_appcontext
def db_revision(message: str) -> None:
    """Autogenerate a revision from the models against the configured (migrated) database."""
    url = current_app.config["CASEWARD_SETTINGS"].database_url
    migrations.autogenerate(url, message)
