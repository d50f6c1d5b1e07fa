"""Privacy exports under ``/api``: what Caseward holds about a customer, for owners only.

An export is made when Shopify relays a customer's data request; the owner fetches it
here to hand over. It stays encrypted at rest and is deleted if the customer is erased.
"""

from __future__ import annotations

import json
import uuid

from flask import Response, current_app, g, jsonify
from sqlalchemy import select

from app.crypto import SecretBox
from app.db import request_session
from app.errors import NotFound
from app.privacy.models import DataExport
from app.shops.models import StaffRole
from app.shops.service import require_role
from app.web.api.routes import bp
from app.web.auth import require_staff
from app.words import said


@bp.get("/privacy/exports")
@require_staff
def exports_index() -> Response:
    session = request_session()
    require_role(session, g.shop.id, g.actor, StaffRole.OWNER_ONLY, said("read privacy exports"))
    exports = session.scalars(
        select(DataExport)
        .where(DataExport.shop_id == g.shop.id)
        .order_by(DataExport.created_at.desc())
    )
    return jsonify({"exports": [_summary(export) for export in exports]})


@bp.get("/privacy/exports/<uuid:export_id>")
@require_staff
def exports_show(export_id: uuid.UUID) -> Response:
    session = request_session()
    require_role(session, g.shop.id, g.actor, StaffRole.OWNER_ONLY, said("read privacy exports"))
    export = session.get(DataExport, export_id)
    if export is None or export.shop_id != g.shop.id:
        raise NotFound(said("no such export"))
    box: SecretBox = current_app.extensions["caseward.secret_box"]
    return jsonify(
        {**_summary(export), "content": json.loads(box.decrypt(export.encrypted_content))}
    )


def _summary(export: DataExport) -> dict[str, object]:
    return {
        "id": str(export.id),
        "request": export.request_ref,
        "customers": len(export.customer_ids),
        "created_at": export.created_at.isoformat(),
    }
