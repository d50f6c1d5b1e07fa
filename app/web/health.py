"""Liveness and readiness: is the database reachable and migrated, is Redis up."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from app.db import Database
from app.jobs.connection import RedisExtension
from app.migrations import current_revision, head_revision, schema_is_behind

bp = Blueprint("health", __name__)


@bp.get("/health")
def health() -> tuple[Response, int]:
    checks = {"database": _database_check(), "redis": _redis_check()}
    healthy = all(check["ok"] for check in checks.values())
    body = {"status": "ok" if healthy else "unavailable", "checks": checks}
    return jsonify(body), 200 if healthy else 503


def _database_check() -> dict[str, Any]:
    engine = Database.state(current_app).engine
    try:
        with engine.connect() as connection:
            revision = current_revision(connection)
    except SQLAlchemyError as exc:
        return {"ok": False, "error": type(exc).__name__}
    head = head_revision()
    if schema_is_behind(revision):
        return {"ok": False, "error": "schema_not_migrated", "revision": revision, "head": head}
    if revision != head:
        # Migrated by a newer release while this one still serves: compatible by rule.
        return {"ok": True, "revision": revision, "head": head, "schema": "ahead"}
    return {"ok": True, "revision": revision}


def _redis_check() -> dict[str, Any]:
    try:
        RedisExtension.connection(current_app).ping()
    except (RedisError, OSError) as exc:
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True}
