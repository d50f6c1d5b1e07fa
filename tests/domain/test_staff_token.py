"""Staff tokens: only ones signed with this app's secret, unexpired and well formed, count."""

from __future__ import annotations

import base64
import json

import pytest

from app.web.auth import SignedStaffToken, StaffIdentity


def _forge(token: SignedStaffToken, claims: object) -> str:
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    signature = base64.urlsafe_b64encode(token._sign(body)).rstrip(b"=").decode()
    return f"{body}.{signature}"


def test_an_issued_token_names_the_shop_and_the_person() -> None:
    token = SignedStaffToken("app-secret")

    identity = token.verify(token.issue("linen.myshopify.com", "sam"))

    assert identity == StaffIdentity("linen.myshopify.com", "sam")


def test_another_apps_token_or_an_edited_one_is_refused() -> None:
    ours, theirs = SignedStaffToken("app-secret"), SignedStaffToken("other-secret")
    foreign = theirs.issue("linen.myshopify.com", "sam")
    signature = ours.issue("linen.myshopify.com", "sam").split(".")[1]
    edited_body = base64.urlsafe_b64encode(
        json.dumps({"shop": "other.myshopify.com", "sub": "sam", "exp": 2**40}).encode()
    ).decode()

    assert ours.verify(foreign) is None
    assert ours.verify(f"{edited_body}.{signature}") is None


def test_an_expired_token_is_refused() -> None:
    token = SignedStaffToken("app-secret")

    assert token.verify(token.issue("linen.myshopify.com", "sam", ttl_seconds=-1)) is None


@pytest.mark.parametrize(
    "claims",
    [
        [],
        {"shop": "linen.myshopify.com"},
        {"shop": 1, "sub": "sam", "exp": 2**40},
        {"shop": "linen.myshopify.com", "sub": "sam", "exp": "never"},
    ],
)
def test_malformed_claims_are_refused_even_when_signed(claims: object) -> None:
    token = SignedStaffToken("app-secret")

    assert token.verify(_forge(token, claims)) is None


@pytest.mark.parametrize("garbage", ["", "a", "a.b.c", "!!!.###", "e30.e30"])
def test_garbage_is_refused(garbage: str) -> None:
    assert SignedStaffToken("app-secret").verify(garbage) is None
