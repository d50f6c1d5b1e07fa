"""The operator page's sign-in: a server-side session, CSRF on every form, no token in
any page, security headers everywhere, and limits on guessing."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text
from sqlalchemy.orm import Session
from staff_support import APPROVER, OWNER, VIEWER, bearer, csrf_token, sign_in

from app.shops.models import Shop

COOKIE = "caseward_operator"


def _session_cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie(COOKIE, path="/operator")
    assert cookie is not None
    return cookie.value


def test_signing_in_needs_the_forms_csrf_token(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)

    forged = client.post("/operator/login", data={"token": token})
    wrong = client.post("/operator/login", data={"token": token, "csrf_token": "forged"})

    for response in (forged, wrong):
        assert response.status_code == 400
        assert client.get_cookie(COOKIE, path="/operator") is None
    assert sign_in(client, token).status_code == 303


def test_no_page_holds_the_token_and_the_cookie_holds_only_a_session_id(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)

    response = sign_in(client, token)

    set_cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    assert token not in set_cookie and token[:12] not in set_cookie
    page = client.get("/operator/").get_data(as_text=True)
    assert "signed in as sam" in page
    assert token not in page and token[5:20] not in page
    assert "<script" not in page


def test_signing_out_ends_the_session_on_the_server(
    app: Flask, shop: Shop, token_for: Callable[..., str]
) -> None:
    browser = app.test_client()
    sign_in(browser, token_for(APPROVER))
    session_id = _session_cookie(browser)
    assert browser.get("/operator/").status_code == 200
    form = csrf_token(browser, "/operator/")

    assert browser.post("/operator/logout", data={}).status_code == 400  # CSRF here too
    signed_out = browser.post("/operator/logout", data={"csrf_token": form})

    assert signed_out.status_code == 303
    replay = app.test_client()
    replay.set_cookie(COOKIE, session_id, path="/operator")
    assert replay.get("/operator/").status_code == 401


def test_revoking_the_token_or_removing_the_person_ends_their_session(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    approver, owner = token_for(APPROVER), token_for(OWNER)
    sign_in(client, approver)
    [listed] = client.get("/api/tokens", headers=bearer(approver)).get_json()["tokens"]

    client.delete(f"/api/tokens/{listed['id']}", headers=bearer(owner))

    assert client.get("/operator/").status_code == 401
    viewer = token_for(VIEWER)
    sign_in(client, viewer)
    assert client.get("/operator/").status_code == 200
    session.execute(text("DELETE FROM staff_members WHERE user_id = :u"), {"u": VIEWER})
    session.commit()
    assert client.get("/operator/").status_code == 403


def test_tokens_of_people_without_a_role_cannot_sign_in(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    token = token_for(VIEWER)
    session.execute(text("DELETE FROM staff_members WHERE user_id = :u"), {"u": VIEWER})
    session.commit()

    response = sign_in(client, token)

    assert response.status_code == 403
    assert client.get_cookie(COOKIE, path="/operator") is None


def test_pages_and_api_answers_carry_the_security_headers(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)
    login = client.get("/operator/login")
    sign_in(client, token)
    page = client.get("/operator/")
    api = client.get("/api/cases", headers=bearer(token))

    for html in (login, page):
        csp = html.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "'unsafe-inline'" not in csp
        nonce = csp.split("'nonce-")[1].split("'")[0]
        assert f'<style nonce="{nonce}">' in html.get_data(as_text=True)
        assert html.headers["X-Content-Type-Options"] == "nosniff"
        assert html.headers["Referrer-Policy"] in ("no-referrer", "same-origin")
        assert html.headers["Cache-Control"] == "no-store"
        assert "Strict-Transport-Security" not in html.headers
    assert api.headers["X-Content-Type-Options"] == "nosniff"
    assert api.headers["Cache-Control"] == "no-store"


def test_over_https_pages_ask_for_https_and_cookies_are_secure(
    app: Flask, shop: Shop, token_for: Callable[..., str]
) -> None:
    browser = app.test_client()
    base = "https://caseward.example"
    page = browser.get("/operator/login", base_url=base).get_data(as_text=True)
    form = page.split('name="csrf_token" value="')[1].split('"')[0]

    response = browser.post(
        "/operator/login",
        data={"token": token_for(APPROVER), "csrf_token": form},
        base_url=base,
        headers={"Referer": f"{base}/operator/login"},  # Flask-WTF checks it over HTTPS
    )

    assert response.status_code == 303
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")
    cookies = response.headers.getlist("Set-Cookie")
    assert cookies and all("Secure" in c for c in cookies)


def test_repeated_bad_sign_ins_are_limited_per_client(
    app: Flask, client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    app.config["CASEWARD_SIGN_IN_LIMIT"] = "3/hour"
    form = csrf_token(client)
    for _ in range(3):
        bad = client.post("/operator/login", data={"token": "cwst_guess", "csrf_token": form})
        assert bad.status_code == 401

    limited = client.post(
        "/operator/login", data={"token": token_for(APPROVER), "csrf_token": form}
    )

    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    assert "Too many attempts" in limited.get_data(as_text=True)
    assert limited.mimetype == "text/html"


def test_refused_bearer_tokens_are_limited_per_client_counting_failures_only(
    app: Flask, client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    app.config["CASEWARD_REFUSED_TOKENS_PER_CLIENT"] = "3/hour"
    good = token_for(APPROVER)
    for _ in range(5):  # successes do not count
        assert client.get("/api/cases", headers=bearer(good)).status_code == 200
    for _ in range(3):
        assert client.get("/api/cases", headers=bearer("cwst_guess")).status_code == 401

    limited = client.get("/api/cases", headers=bearer(good))

    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    assert limited.get_json()["error"]["code"] == "rate_limited"
    elsewhere = {"REMOTE_ADDR": "192.0.2.7"}
    assert client.get("/api/cases", headers=bearer(good), environ_base=elsewhere).status_code == 200


def test_refused_tokens_of_a_shop_are_limited_per_shop_across_clients(
    app: Flask, client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    """Someone replays a revoked token of the shop from one address after another: past
    the shop's limit it is answered 429 wherever it comes from, while the shop's staff
    keep working with their own tokens, on the API and on the operator page."""
    app.config["CASEWARD_REFUSED_TOKENS_PER_SHOP"] = "2/hour"
    old = token_for(APPROVER)
    [listed] = client.get("/api/tokens", headers=bearer(old)).get_json()["tokens"]
    client.delete(f"/api/tokens/{listed['id']}", headers=bearer(old))
    for address in ("192.0.2.1", "192.0.2.2"):
        refused = client.get(
            "/api/cases", headers=bearer(old), environ_base={"REMOTE_ADDR": address}
        )
        assert refused.status_code == 401

    limited = client.get(
        "/api/cases", headers=bearer(old), environ_base={"REMOTE_ADDR": "192.0.2.3"}
    )
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    signing_in = client.post(
        "/operator/login",
        data={"token": old, "csrf_token": csrf_token(client)},
        environ_base={"REMOTE_ADDR": "192.0.2.4"},
    )
    assert signing_in.status_code == 429

    staff_elsewhere = {"REMOTE_ADDR": "192.0.2.5"}
    live = token_for(VIEWER)
    assert (
        client.get("/api/cases", headers=bearer(live), environ_base=staff_elsewhere).status_code
        == 200
    )
    signed_in = client.post(
        "/operator/login",
        data={"token": live, "csrf_token": csrf_token(client)},
        environ_base=staff_elsewhere,
    )
    assert signed_in.status_code == 303
