"""Flask CLI commands (``flask --app app <command>``)."""

from __future__ import annotations

import sys

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from sqlalchemy import select

from app import migrations
from app.audit import verify_chain
from app.db import Database
from app.shops.models import Shop
from app.web.auth import staff_token


def register_commands(app: Flask) -> None:
    for command in (db_upgrade, db_revision, issue_token, audit_verify):
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


@click.command("issue-token")
@click.option("--shop", "shop_domain", required=True, help="The shop's myshopify.com domain.")
@click.option("--user", "user_id", required=True, help="The staff member's user id.")
@click.option("--ttl", default=3600, show_default=True, help="Lifetime in seconds.")
@with_appcontext
def issue_token(shop_domain: str, user_id: str, ttl: int) -> None:
    """Print a signed staff token (for the operator page and scripts)."""
    click.echo(staff_token().issue(shop_domain, user_id, ttl))


@click.command("audit-verify")
@click.option("--shop", "shop_domain", required=True, help="The shop's myshopify.com domain.")
@with_appcontext
def audit_verify(shop_domain: str) -> None:
    """Recompute a shop's audit hash chain; exit 1 naming the first broken link."""
    with Database.state(current_app).session_factory() as session:
        shop = session.scalars(select(Shop).where(Shop.domain == shop_domain)).one_or_none()
        if shop is None:
            raise click.ClickException(f"no shop {shop_domain}")
        report = verify_chain(session, shop.id)
    if report.intact:
        click.echo(f"{shop_domain}: {report.events} events, chain intact")
        return
    click.echo(
        f"{shop_domain}: chain broken at event {report.broken_at}: {report.problem}", err=True
    )
    sys.exit(1)
