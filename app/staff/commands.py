"""Staff and token commands for whoever operates the installation.

``flask --app app staff add|set-role|set-limit|remove|list --shop DOMAIN ...`` manages
members; ``issue-token`` prints a new token once (only to staff of the shop),
``list-tokens`` shows prefixes and uses, ``revoke-token`` ends a token at once. Every
change is audited as done by ``console:<login>``. Refusals exit 1 with the reason.
"""

from __future__ import annotations

import getpass
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import click
from flask import current_app
from flask.cli import with_appcontext
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Actor, Surface, system_actor
from app.clock import utcnow
from app.db import Database
from app.errors import CasewardError
from app.shops.models import Shop
from app.shops.service import staff_member
from app.staff.members import ROLES, add_member, list_members, remove_member, update_member
from app.staff.models import StaffToken
from app.staff.tokens import issue_token, lifetime_from_days, list_tokens, revoke_token

shop_option = click.option(
    "--shop", "shop_domain", required=True, help="The shop's myshopify.com domain."
)
user_option = click.option("--user", "user_id", required=True, help="The staff member's user id.")
role_option = click.option("--role", required=True, type=click.Choice(ROLES))


@click.command("issue-token")
@shop_option
@user_option
@click.option("--days", type=int, default=None, help="Lifetime in days (default 30, at most 365).")
@click.option("--label", default=None, help="What the token is for, shown in token lists.")
@with_appcontext
def issue_token_command(
    shop_domain: str, user_id: str, days: int | None, label: str | None
) -> None:
    """Print a new staff token (shown this once) for a staff member of the shop."""
    with _shop_session(shop_domain) as (session, shop):
        issued = issue_token(
            session,
            shop=shop,
            user_id=user_id,
            issued_by=_console_actor(),
            lifetime=lifetime_from_days(days),
            label=label,
            now=utcnow(),
            console=True,
        )
        session.commit()
    click.echo(
        f"token {issued.row.id} ({issued.row.prefix}...) for {user_id}, "
        f"expires {issued.row.expires_at:%Y-%m-%d %H:%M} UTC; it is shown only now:",
        err=True,
    )
    click.echo(issued.secret)


@click.command("revoke-token")
@shop_option
@click.argument("token_id", type=click.UUID)
@with_appcontext
def revoke_token_command(shop_domain: str, token_id: uuid.UUID) -> None:
    """Revoke a token at once (its id is in ``list-tokens``); its sessions end with it."""
    with _shop_session(shop_domain) as (session, shop):
        token = revoke_token(
            session,
            shop_id=shop.id,
            token_id=token_id,
            actor=_console_actor(),
            now=utcnow(),
            console=True,
        )
        session.commit()
    click.echo(f"token {token.id} ({token.prefix}...) of {token.user_id} is revoked")


@click.command("list-tokens")
@shop_option
@with_appcontext
def list_tokens_command(shop_domain: str) -> None:
    """The shop's tokens: id, prefix, person, expiry, last use, revocation."""
    with _shop_session(shop_domain) as (session, shop):
        for token in list_tokens(session, shop.id, _console_actor(), console=True):
            click.echo(_token_line(token))


@click.group("staff")
def staff() -> None:
    """Manage a shop's staff, their roles and approval limits."""


@staff.command("add")
@shop_option
@user_option
@role_option
@click.option("--email", default=None)
@click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="CURRENCY=AMOUNT",
    help="Approval limit in minor units, e.g. usd=10000 for $100.00; repeatable.",
)
@with_appcontext
def staff_add(
    shop_domain: str, user_id: str, role: str, email: str | None, limits: tuple[str, ...]
) -> None:
    with _shop_session(shop_domain) as (session, shop):
        member = add_member(
            session,
            shop=shop,
            actor=_console_actor(),
            user_id=user_id,
            role=role,
            email=email,
            approval_limits=_parse_limit_options(limits),
            now=utcnow(),
            console=True,
        )
        session.commit()
    click.echo(f"{member.user_id} is now a {member.role} of {shop_domain}")


@staff.command("set-role")
@shop_option
@user_option
@role_option
@with_appcontext
def staff_set_role(shop_domain: str, user_id: str, role: str) -> None:
    with _shop_session(shop_domain) as (session, shop):
        update_member(
            session,
            shop=shop,
            actor=_console_actor(),
            user_id=user_id,
            role=role,
            now=utcnow(),
            console=True,
        )
        session.commit()
    click.echo(f"{user_id} is now a {role} of {shop_domain}")


@staff.command("set-limit")
@shop_option
@user_option
@click.option("--currency", required=True, help="ISO 4217 code, e.g. usd.")
@click.option("--amount", required=True, type=int, help="Minor units (4800 is $48.00).")
@with_appcontext
def staff_set_limit(shop_domain: str, user_id: str, currency: str, amount: int) -> None:
    with _shop_session(shop_domain) as (session, shop):
        member = staff_member(session, shop.id, user_id)
        limits = {**(member.approval_limits if member else {}), currency: amount}
        updated = update_member(
            session,
            shop=shop,
            actor=_console_actor(),
            user_id=user_id,
            approval_limits=limits,
            now=utcnow(),
            console=True,
        )
        session.commit()
    click.echo(f"{user_id} may approve up to {updated.approval_limits}")


@staff.command("remove")
@shop_option
@user_option
@with_appcontext
def staff_remove(shop_domain: str, user_id: str) -> None:
    with _shop_session(shop_domain) as (session, shop):
        revoked = remove_member(
            session, shop=shop, actor=_console_actor(), user_id=user_id, now=utcnow(), console=True
        )
        session.commit()
    click.echo(f"{user_id} is no longer staff of {shop_domain}; {revoked} token(s) revoked")


@staff.command("list")
@shop_option
@with_appcontext
def staff_list(shop_domain: str) -> None:
    with _shop_session(shop_domain) as (session, shop):
        for member in list_members(session, shop=shop, actor=_console_actor(), console=True):
            limits = ", ".join(f"{c}={a}" for c, a in sorted(member.approval_limits.items()))
            click.echo(f"{member.user_id}\t{member.role}\t{limits or '-'}")


COMMANDS = (issue_token_command, revoke_token_command, list_tokens_command, staff)


@contextmanager
def _shop_session(shop_domain: str) -> Iterator[tuple[Session, Shop]]:
    """A session and the shop; any refusal becomes a message and exit code 1."""
    with Database.state(current_app).session_factory() as session:
        shop = session.scalars(select(Shop).where(Shop.domain == shop_domain)).one_or_none()
        if shop is None:
            raise click.ClickException(f"no shop {shop_domain}")
        try:
            yield session, shop
        except CasewardError as error:
            session.rollback()
            raise click.ClickException(error.message) from error


def _console_actor() -> Actor:
    try:
        name = f"console:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name in some containers
        name = "console"
    return system_actor(name, Surface.CONSOLE)


def _parse_limit_options(limits: tuple[str, ...]) -> dict[str, object]:
    parsed: dict[str, object] = {}
    for entry in limits:
        currency, separator, amount = entry.partition("=")
        if not separator or not amount.strip().isdigit():
            raise click.BadParameter(f"{entry!r} is not CURRENCY=AMOUNT", param_hint="--limit")
        parsed[currency.strip()] = int(amount)
    return parsed


def _token_line(token: StaffToken) -> str:
    state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "live"
    used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
    return (
        f"{token.id}\t{token.prefix}...\t{token.user_id}\t"
        f"expires {token.expires_at:%Y-%m-%d %H:%M}\tlast used {used}\t{state}"
    )
