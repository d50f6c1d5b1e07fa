"""Audit trail commands: ``flask --app app audit-verify`` and ``audit-export``.

``audit-verify`` exits 1 on any break, naming the first broken link, including
events removed since the shop's newest checkpoint (or one given) and a checkpoint
whose signature does not verify. ``audit-export`` writes a shop's events as JSON
lines followed by a signed checkpoint of the exported head, and keeps that
checkpoint outside the database too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, NoReturn

import click
from flask import current_app
from flask.cli import with_appcontext
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditKeyRing, verify_chain
from app.audit_checkpoints import (
    Checkpoint,
    CheckpointError,
    check_against,
    checkpoint_dir,
    create_private_file,
    export_records,
    head_checkpoint,
    keep_checkpoint,
    load_checkpoint,
    newest_checkpoint_path,
    signed_line,
)
from app.clock import utcnow
from app.db import Database
from app.settings import Settings
from app.shops.models import Shop


@click.command("audit-verify")
@click.option("--shop", "shop_domain", required=True, help="The shop's myshopify.com domain.")
@click.option(
    "--checkpoint",
    "checkpoint_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A checkpoint or export file; default: the shop's newest checkpoint.",
)
@with_appcontext
def audit_verify(shop_domain: str, checkpoint_file: Path | None) -> None:
    """Recompute a shop's audit chain with the audit keys and compare it with a
    checkpoint; exit 1 naming the first broken link."""
    keys, settings = _keys(), _settings()
    with Database.state(current_app).session_factory() as session:
        shop = _shop(session, shop_domain)
        path = checkpoint_file or newest_checkpoint_path(
            checkpoint_dir(settings), shop.domain, shop.id
        )
        try:
            checkpoint = load_checkpoint(path, keys) if path else None
        except CheckpointError as exc:
            _fail(f"{shop_domain}: {exc}")
        report = verify_chain(session, shop.id, keys)
        try:
            report = check_against(session, shop.id, report, checkpoint) if checkpoint else report
        except CheckpointError as exc:
            _fail(f"{shop_domain}: checkpoint {path} refused: {exc}")
    if not report.intact:
        _fail(f"{shop_domain}: chain broken at event {report.broken_at}: {report.problem}")
    click.echo(f"{shop_domain}: {report.events} events, chain intact")
    if report.unkeyed:
        click.echo(
            f"  events 1-{report.unkeyed} predate keyed sealing (plain SHA-256): "
            "they show order, not that Caseward wrote them"
        )
    if checkpoint is None:
        click.echo(
            "  no checkpoint found: events removed from the end of the chain cannot be ruled out"
        )
    else:
        click.echo(f"  holds the checkpoint of {checkpoint.when} (event {checkpoint.seq})")


@click.command("audit-export")
@click.option("--shop", "shop_domain", required=True, help="The shop's myshopify.com domain.")
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="File to create (owner-only); default: standard output.",
)
@with_appcontext
def audit_export(shop_domain: str, out_file: Path | None) -> None:
    """Write a shop's audit events as JSON lines, then a signed checkpoint of their head."""
    keys, settings = _keys(), _settings()
    with Database.state(current_app).session_factory() as session:
        shop = _shop(session, shop_domain)
        checkpoint = head_checkpoint(session, shop, keys, utcnow())
        if out_file is None:
            write_export(sys.stdout, session, checkpoint, keys)
        else:
            try:
                create_private_file(out_file, "")
            except FileExistsError:
                raise click.ClickException(f"{out_file} exists; not overwriting it") from None
            with out_file.open("w", encoding="utf-8") as out:
                write_export(out, session, checkpoint, keys)
        try:
            kept = keep_checkpoint(session, checkpoint, keys, checkpoint_dir(settings))
        except CheckpointError as exc:
            kept = None
            click.echo(f"warning: {exc}", err=True)
    if out_file is not None:
        click.echo(f"{shop_domain}: {checkpoint.seq} events written to {out_file}")
    if kept is not None:
        click.echo(f"checkpoint kept in {kept}", err=True)


def write_export(
    out: IO[str], session: Session, checkpoint: Checkpoint, keys: AuditKeyRing
) -> None:
    for record in export_records(session, checkpoint):
        out.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    out.write(signed_line(checkpoint, keys) + "\n")


def _keys() -> AuditKeyRing:
    keys: AuditKeyRing = current_app.extensions["caseward.audit_keys"]
    return keys


def _settings() -> Settings:
    settings: Settings = current_app.config["CASEWARD_SETTINGS"]
    return settings


def _shop(session: Session, shop_domain: str) -> Shop:
    shop = session.scalars(select(Shop).where(Shop.domain == shop_domain)).one_or_none()
    if shop is None:
        raise click.ClickException(f"no shop {shop_domain}")
    return shop


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(1)
