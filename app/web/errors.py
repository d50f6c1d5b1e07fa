"""Every error leaves as JSON naming what went wrong, never as an HTML page."""

from __future__ import annotations

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[Response, int]:
        code = error.code or 500
        body = {"error": {"code": _slug(error.name), "message": error.description}}
        return jsonify(body), code


def _slug(name: str) -> str:
    return name.lower().replace(" ", "_").replace("'", "")
