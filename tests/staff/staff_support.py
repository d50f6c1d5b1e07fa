"""Helpers for the staff tests: the shop's people, bearer headers, signing in with CSRF."""

from __future__ import annotations

import re

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

SHOP = "linen.myshopify.com"
OWNER, APPROVER, PROPOSER, VIEWER = "olivia", "sam", "pat", "vic"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def csrf_token(client: FlaskClient, path: str = "/operator/login") -> str:
    page = client.get(path).get_data(as_text=True)
    found = CSRF_FIELD.search(page)
    assert found, f"no CSRF field on {path}"
    return found.group(1)


def sign_in(client: FlaskClient, token: str) -> TestResponse:
    return client.post("/operator/login", data={"token": token, "csrf_token": csrf_token(client)})
