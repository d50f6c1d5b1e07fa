"""The shop's audit trail as a file, for owners: ``GET /api/audit/export?format=json|csv``.

``json`` is exactly what ``flask audit-export`` writes (:mod:`app.audit_commands`): one
JSON object per event, oldest first, then a signed checkpoint of the exported head, so
the downloaded file verifies with ``flask audit-verify --checkpoint <file>``. ``csv``
holds the same events, one row each, for a spreadsheet; it carries no checkpoint.
Like the command, every export keeps its checkpoint outside the database too, which
is what catches events deleted later.

Only the caller's shop is exported; only owners may export it.
"""

from __future__ import annotations

import csv
import io
import json
import logging

from flask import Response, current_app, g, request
from sqlalchemy.orm import Session

from app.audit import AuditKeyRing
from app.audit_checkpoints import (
    Checkpoint,
    CheckpointError,
    checkpoint_dir,
    export_records,
    head_checkpoint,
    keep_checkpoint,
)
from app.audit_commands import write_export
from app.clock import utcnow
from app.db import request_session
from app.shops.models import StaffRole
from app.shops.service import require_role
from app.validation import choice
from app.web.api.routes import bp
from app.web.auth import require_staff
from app.words import said

log = logging.getLogger(__name__)

FORMATS = ("json", "csv")
CSV_COLUMNS = (
    "seq",
    "created_at",
    "kind",
    "actor",
    "actor_kind",
    "actor_surface",
    "case_id",
    "action_id",
    "data",
    "shop_id",
    "prev_hash",
    "hash",
    "key_id",
)
# A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@bp.get("/audit/export")
@require_staff
def audit_export() -> Response:
    file_format = choice(request.args.get("format", "json"), "format", FORMATS)
    session = request_session()
    require_role(session, g.shop.id, g.actor, StaffRole.OWNER_ONLY, said("export the audit trail"))
    keys: AuditKeyRing = current_app.extensions["caseward.audit_keys"]
    checkpoint = head_checkpoint(session, g.shop, keys, utcnow())
    if file_format == "json":
        body, mimetype = _json_lines(session, checkpoint, keys), "application/x-ndjson"
    else:
        body, mimetype = _csv(session, checkpoint), "text/csv"
    _keep(session, checkpoint, keys)
    extension = "jsonl" if file_format == "json" else "csv"
    name = f"caseward-audit-{g.shop.domain}-{checkpoint.seq}.{extension}"
    return Response(
        body,
        mimetype=mimetype,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _json_lines(session: Session, checkpoint: Checkpoint, keys: AuditKeyRing) -> str:
    # The command's own writer, so the two exports cannot differ.
    out = io.StringIO()
    write_export(out, session, checkpoint, keys)
    return out.getvalue()


def _csv(session: Session, checkpoint: Checkpoint) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for record in export_records(session, checkpoint):
        record["data"] = json.dumps(record["data"], ensure_ascii=False, sort_keys=True)
        writer.writerow(_cell(record[column]) for column in CSV_COLUMNS)
    return out.getvalue()


def _cell(value: object) -> object:
    """A value as a spreadsheet should read it: text, never a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _keep(session: Session, checkpoint: Checkpoint, keys: AuditKeyRing) -> None:
    try:
        kept = keep_checkpoint(
            session, checkpoint, keys, checkpoint_dir(current_app.config["CASEWARD_SETTINGS"])
        )
    except CheckpointError as exc:
        # The export itself is still what the database holds; the break is for audit-verify.
        log.error("audit export: checkpoint not kept: %s", exc)
        return
    if kept is not None:
        log.info("audit export: checkpoint kept in %s", kept)
