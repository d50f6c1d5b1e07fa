"""Signed checkpoints of each shop's audit chain, kept outside the database.

The keyed chain stops anyone without the audit key from rewriting events, but not
from deleting the newest ones and rewinding the head row: what is left is still a
valid chain. A checkpoint records "this shop's chain had N events ending in hash H
at time T", signed with the audit key and written to files outside the database
(``CASEWARD_AUDIT_CHECKPOINT_DIR``), so a chain that is shorter than a checkpoint,
or differs from it at N, shows that events were removed since.

Files: ``<dir>/<shop domain>/<time>-<seq>.json``, one JSON line each, owner-only,
created whole and never overwritten. A checkpoint is written only when the head
moved since the shop's newest one, and never for a chain that no longer holds that
newest checkpoint's head: writing one would hide the cut from the next verify.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from itsdangerous import Signer
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import (
    GENESIS_HASH,
    AuditEvent,
    AuditHead,
    AuditKeyRing,
    ChainReport,
    session_key_ring,
)
from app.jobs.context import WorkerContext
from app.jobs.sweeper import Queues, Sweep, SweepReport
from app.settings import Settings
from app.shops.models import Shop

log = logging.getLogger(__name__)

FORMAT = "caseward.audit-checkpoint/1"
# Derives a signing key of its own from the audit key, apart from the chain's seals.
_SALT = "caseward.audit-checkpoint"
_FILE_TIME = "%Y%m%dT%H%M%S%fZ"
_SAFE_FOLDER = re.compile(r"[a-z0-9][a-z0-9.-]{0,252}")


class CheckpointError(Exception):
    """A checkpoint cannot be trusted or cannot be written; the message says why."""


@dataclass(frozen=True)
class Checkpoint:
    shop_id: uuid.UUID
    shop_domain: str
    seq: int
    head_hash: str
    written_at: datetime
    key_id: str

    def payload(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "shop_id": str(self.shop_id),
            "shop_domain": self.shop_domain,
            "seq": self.seq,
            "head_hash": self.head_hash,
            "written_at": self.written_at.astimezone(UTC).isoformat(timespec="microseconds"),
            "key_id": self.key_id,
        }

    @property
    def when(self) -> str:
        return self.written_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _signer(keys: AuditKeyRing, key_id: str) -> Signer:
    return Signer(
        keys.secret(key_id), salt=_SALT, key_derivation="hmac", digest_method=hashlib.sha256
    )


def _canonical(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()


def signed_line(checkpoint: Checkpoint, keys: AuditKeyRing) -> str:
    """The checkpoint as one JSON line carrying its signature."""
    payload = checkpoint.payload()
    signature = _signer(keys, checkpoint.key_id).get_signature(_canonical(payload)).decode()
    return json.dumps({"checkpoint": payload, "signature": signature}, sort_keys=True)


def read_checkpoint(text: str, keys: AuditKeyRing) -> Checkpoint:
    """The checkpoint on the last line of ``text`` (a checkpoint file or an export),
    refused unless its signature verifies under the audit key it names."""
    lines = [line for line in text.splitlines() if line.strip()] or ["null"]
    try:
        document = json.loads(lines[-1])
        payload, signature = document["checkpoint"], document["signature"]
        key_id = payload["key_id"]
        if payload["format"] != FORMAT or not isinstance(key_id, str):
            raise ValueError(payload["format"])
    except (ValueError, TypeError, KeyError) as exc:
        raise CheckpointError("not a Caseward audit checkpoint") from exc
    if not keys.knows(key_id):
        raise CheckpointError(f"signed with audit key {key_id!r}, which is not configured")
    if not isinstance(signature, str) or not _signer(keys, key_id).verify_signature(
        _canonical(payload), signature
    ):
        raise CheckpointError("its signature does not verify: forged or altered")
    try:
        return Checkpoint(
            shop_id=uuid.UUID(payload["shop_id"]),
            shop_domain=str(payload["shop_domain"]),
            seq=int(payload["seq"]),
            head_hash=str(payload["head_hash"]),
            written_at=datetime.fromisoformat(payload["written_at"]),
            key_id=key_id,
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise CheckpointError("a field of the checkpoint is malformed") from exc


def load_checkpoint(path: Path, keys: AuditKeyRing) -> Checkpoint:
    try:
        return read_checkpoint(path.read_text(encoding="utf-8"), keys)
    except CheckpointError as exc:
        raise CheckpointError(f"checkpoint {path} refused: {exc}") from exc


def create_private_file(path: Path, text: str) -> None:
    """Create ``path`` holding ``text``: owner-only from the first byte, whole or not at
    all, and never over an existing file (raises FileExistsError)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        # A hard link appears atomically and refuses to replace an existing file.
        os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)


def shop_folder(directory: Path, shop_domain: str, shop_id: uuid.UUID) -> Path:
    name = shop_domain.lower()
    return directory / (name if _SAFE_FOLDER.fullmatch(name) else str(shop_id))


def newest_checkpoint_path(directory: Path, shop_domain: str, shop_id: uuid.UUID) -> Path | None:
    """The shop's most recently written checkpoint file (names sort by time)."""
    folder = shop_folder(directory, shop_domain, shop_id)
    if not folder.is_dir():
        return None
    names = [path.name for path in folder.iterdir() if _is_checkpoint_name(path.name)]
    return folder / max(names) if names else None


def _is_checkpoint_name(name: str) -> bool:
    return name.endswith(".json") and not name.startswith(".")


def head_checkpoint(session: Session, shop: Shop, keys: AuditKeyRing, now: datetime) -> Checkpoint:
    """A checkpoint of the shop's chain head as the database has it now."""
    return _checkpoint(shop, session.get(AuditHead, shop.id, populate_existing=True), keys, now)


def _checkpoint(
    shop: Shop, head: AuditHead | None, keys: AuditKeyRing, now: datetime
) -> Checkpoint:
    return Checkpoint(
        shop_id=shop.id,
        shop_domain=shop.domain,
        seq=head.seq if head else 0,
        head_hash=head.hash if head else GENESIS_HASH,
        written_at=now,
        key_id=keys.current_id,
    )


def keep_checkpoint(
    session: Session,
    checkpoint: Checkpoint,
    keys: AuditKeyRing,
    directory: Path,
    min_interval: timedelta = timedelta(0),
) -> Path | None:
    """Write ``checkpoint`` if the head moved since the shop's newest one and at least
    ``min_interval`` has passed; returns the new file, or None when none was due.
    Raises :class:`CheckpointError` when the chain no longer holds the newest one."""
    previous_path = newest_checkpoint_path(directory, checkpoint.shop_domain, checkpoint.shop_id)
    if previous_path is not None:
        previous = load_checkpoint(previous_path, keys)
        if (previous.seq, previous.head_hash) == (checkpoint.seq, checkpoint.head_hash):
            return None
        if checkpoint.written_at - previous.written_at < min_interval:
            return None
        problem = _difference(session, checkpoint.shop_id, checkpoint.seq, previous)
        if problem is not None:
            raise CheckpointError(
                f"{checkpoint.shop_domain}: {problem}; no new checkpoint written "
                "(run flask audit-verify)"
            )
    folder = shop_folder(directory, checkpoint.shop_domain, checkpoint.shop_id)
    name = f"{checkpoint.written_at.astimezone(UTC).strftime(_FILE_TIME)}-{checkpoint.seq:012d}"
    path = folder / f"{name}.json"
    create_private_file(path, signed_line(checkpoint, keys) + "\n")
    return path


def write_due_checkpoints(session: Session, settings: Settings, now: datetime) -> list[Path]:
    """Checkpoint every shop whose chain head moved and whose newest checkpoint is at
    least ``audit_checkpoint_interval_seconds`` old. Called by each sweep (:data:`SWEEP`);
    a shop whose chain contradicts its newest checkpoint is logged and skipped."""
    keys = session_key_ring(session)
    directory = checkpoint_dir(settings)
    interval = timedelta(seconds=settings.audit_checkpoint_interval_seconds)
    written: list[Path] = []
    heads = session.execute(select(Shop, AuditHead).join(AuditHead, AuditHead.shop_id == Shop.id))
    for shop, head in heads.all():
        try:
            path = keep_checkpoint(
                session, _checkpoint(shop, head, keys, now), keys, directory, interval
            )
        except CheckpointError as exc:
            log.error("audit checkpoint refused: %s", exc)
            continue
        if path is not None:
            written.append(path)
    return written


def checkpoint_dir(settings: Settings) -> Path:
    directory = settings.completed().audit_checkpoint_dir
    assert directory is not None  # completed() always fills it in
    return directory


def check_against(
    session: Session, shop_id: uuid.UUID, report: ChainReport, checkpoint: Checkpoint
) -> ChainReport:
    """``report`` (from :func:`app.audit.verify_chain`), broken if the chain lost events
    the checkpoint saw. The first break in the chain itself is reported first."""
    if checkpoint.shop_id != shop_id:
        raise CheckpointError(f"the checkpoint is for shop {checkpoint.shop_domain}")
    if not report.intact:
        return report
    problem = _difference(session, shop_id, report.head_seq, checkpoint)
    if problem is None:
        return report
    broken_at = report.head_seq + 1 if report.head_seq < checkpoint.seq else checkpoint.seq
    return replace(report, broken_at=broken_at, problem=problem)


def _difference(
    session: Session, shop_id: uuid.UUID, head_seq: int, checkpoint: Checkpoint
) -> str | None:
    """Why a chain whose head is ``head_seq`` does not contain ``checkpoint``, or None."""
    if head_seq < checkpoint.seq:
        return (
            f"events after {head_seq} were removed since the checkpoint of {checkpoint.when} "
            f"(which saw {checkpoint.seq})"
        )
    if checkpoint.seq == 0:
        return None
    stored = session.scalar(
        select(AuditEvent.hash).where(
            AuditEvent.shop_id == shop_id, AuditEvent.seq == checkpoint.seq
        )
    )
    if stored != checkpoint.head_hash:
        return (
            f"event {checkpoint.seq} differs from the checkpoint of {checkpoint.when}: "
            f"events up to {checkpoint.seq} were removed and replaced since"
        )
    return None


def export_records(session: Session, checkpoint: Checkpoint) -> Iterator[dict[str, Any]]:
    """The shop's events up to the checkpoint's head, oldest first, as plain JSON."""
    events = session.scalars(
        select(AuditEvent)
        .where(AuditEvent.shop_id == checkpoint.shop_id, AuditEvent.seq <= checkpoint.seq)
        .order_by(AuditEvent.seq)
        .execution_options(yield_per=500)
    )
    for event in events:
        yield {
            "shop_id": str(event.shop_id),
            "seq": event.seq,
            "kind": event.kind,
            "actor": event.actor,
            "actor_kind": event.actor_kind,
            "actor_surface": event.actor_surface,
            "case_id": str(event.case_id) if event.case_id else None,
            "action_id": str(event.action_id) if event.action_id else None,
            "data": event.data,
            "created_at": event.created_at.isoformat(timespec="microseconds"),
            "prev_hash": event.prev_hash,
            "hash": event.hash,
            "key_id": event.key_id,
        }


def sweep_checkpoints(ctx: WorkerContext, queues: Queues) -> SweepReport:
    with ctx.session_factory() as session:
        written = write_due_checkpoints(session, ctx.settings, ctx.clock())
    return {"checkpoints": [str(path) for path in written]}


SWEEP = Sweep("audit checkpoints", sweep_checkpoints)
