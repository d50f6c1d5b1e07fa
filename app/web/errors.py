"""Every error leaves as JSON naming what went wrong, never as an HTML page."""

from __future__ import annotations

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from app.db import request_session
from app.errors import CasewardError
from app.web.admin_text import in_reader_words
from app.web.limits import too_large_message
from app.web.refusals import record_refusal


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(CasewardError)
    def domain_error(error: CasewardError) -> tuple[Response, int]:
        # Nothing half-written: whatever the request changed before failing is dropped,
        # and only then is the refusal itself put on the record.
        request_session().rollback()
        record_refusal(error)
        body: dict[str, object] = {"code": error.code, "message": in_reader_words(error.sentence)}
        if error.field is not None:
            body["field"] = error.field
        response = jsonify({"error": body})
        response.headers.update(error.headers)
        return response, error.status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        code = error.code or 500
        message = too_large_message() if code == 413 else error.description
        body = {"error": {"code": _slug(error.name), "message": message}}
        response = jsonify(body)
        response.status_code = code
        # Keep what the error says besides its page: Allow on 405, Retry-After on 429.
        for name, value in error.get_headers():
            if name.lower() != "content-type":
                response.headers[name] = value
        return response


def _slug(name: str) -> str:
    return name.lower().replace(" ", "_").replace("'", "")
