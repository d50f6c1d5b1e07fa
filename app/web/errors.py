"""Every error leaves as JSON naming what went wrong, never as an HTML page."""

from __future__ import annotations

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from app.db import request_session
from app.errors import CasewardError


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(CasewardError)
    def domain_error(error: CasewardError) -> tuple[Response, int]:
        # Nothing half-written: whatever the request changed before failing is dropped.
        request_session().rollback()
        body: dict[str, object] = {"code": error.code, "message": error.message}
        if error.field is not None:
            body["field"] = error.field
        return jsonify({"error": body}), error.status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[Response, int]:
        code = error.code or 500
        body = {"error": {"code": _slug(error.name), "message": error.description}}
        return jsonify(body), code


def _slug(name: str) -> str:
    return name.lower().replace(" ", "_").replace("'", "")
