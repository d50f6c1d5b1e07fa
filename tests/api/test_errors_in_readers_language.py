"""A refusal from the staff API is said in the language the caller asks for
(``Accept-Language``, which the admin's pages send as their own locale): its words through
the message catalogue, its money and numbers as that locale writes them. Without the
header it reads exactly as it always has, and the record of a refusal keeps the English.
The examples name money: an owner's malformed approval limit (its example amount) and an
approval over the approver's limit.

French reads French from the shipped catalogue; a pseudo-locale catalogue (every sentence
its English in ⟦ ⟧, loaded over the shipped one) shows every word comes from the
catalogue, nested sentences included.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import Staff
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.clock import utcnow
from app.demo import APPROVER as APPROVER_OF_LINEN
from app.demo import LinenShop
from app.shops.models import Shop, StaffMember, StaffRole
from app.web import admin_text

DOMAIN = "words-linen.myshopify.com"
OWNER, APPROVER = "olga.owner", "abe.approver"
ENGLISH_PO = Path(__file__).resolve().parents[2] / "app/translations/en/LC_MESSAGES/messages.po"
ENGLISH = "an approval limit is a whole, non-negative number of minor units (4800 is $48.00)"
FRENCH = (
    "une limite d'approbation est un nombre entier positif ou nul d'unités mineures "
    "(4800 correspond à 48,00\u00a0$US)"
)


@pytest.fixture
def shop_id(session: Session) -> uuid.UUID:
    """A shop with an owner and an approver; no provider is needed to refuse them."""
    shop = Shop(domain=DOMAIN, name="Words Linen", created_at=utcnow())
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
    session.add(StaffMember(shop_id=shop.id, user_id=APPROVER, role=StaffRole.APPROVER))
    session.commit()
    return shop.id


def _put(
    client: FlaskClient, app: Flask, user_id: str, path: str, body: dict[str, Any], **headers: str
) -> Any:
    token = Staff.issue_token(app, DOMAIN, user_id)
    return client.put(path, json=body, headers={"Authorization": f"Bearer {token}", **headers})


def _negative_limit(client: FlaskClient, app: Flask, **headers: str) -> Any:
    """An owner gives the approver a negative approval limit: refused with an example
    amount of money."""
    return _put(
        client, app, OWNER, f"/api/staff/{APPROVER}", {"approval_limits": {"usd": -1}}, **headers
    )


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({}, ENGLISH),
        ({"Accept-Language": "en-US"}, ENGLISH),
        ({"Accept-Language": "fr-FR"}, FRENCH),
        ({"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"}, FRENCH),
    ],
    ids=["no header", "en-US", "fr-FR", "fr-FR first"],
)
def test_a_refusal_writes_its_money_as_the_callers_language_does(
    client: FlaskClient, app: Flask, shop_id: uuid.UUID, headers: dict[str, str], said: str
) -> None:
    response = _negative_limit(client, app, **headers)

    assert response.status_code == 400
    assert response.get_json()["error"] == {
        "code": "invalid_input",
        "message": said,
        "field": "approval_limits.usd",
    }


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({}, f"{APPROVER_OF_LINEN} may approve up to $10.00, not $48.00"),
        (
            {"Accept-Language": "fr-FR"},
            f"{APPROVER_OF_LINEN} peut approuver jusqu'à 10,00\u00a0$US, et non 48,00\u00a0$US",
        ),
    ],
    ids=["no header", "fr-FR"],
)
def test_an_approval_over_the_approvers_limit_names_both_amounts_in_the_callers_format(
    linen: LinenShop,
    approver: Staff,
    client: FlaskClient,
    session: Session,
    headers: dict[str, str],
    said: str,
) -> None:
    member = session.scalars(select(StaffMember).filter_by(user_id=APPROVER_OF_LINEN)).one()
    member.approval_limits = {"usd": 1000}
    session.commit()
    [proposal] = approver.get(f"/api/cases/{linen.case_id}").get_json()["proposals"]

    response = client.post(
        f"/api/proposals/{proposal['id']}/approve",
        json={"digest": proposal["digest"]},
        headers={"Authorization": f"Bearer {approver.token}", **headers},
    )

    assert response.status_code == 403
    assert response.get_json()["error"] == {"code": "over_approval_limit", "message": said}


@pytest.fixture
def pseudo_french(app: Flask, tmp_path: Path) -> Iterator[None]:
    """A French catalogue whose every message is its English in ⟦ ⟧, listed after the
    shipped catalogues so that its words are the ones said."""
    with ENGLISH_PO.open("rb") as po:
        catalogue = read_po(po, locale="fr")
    for message in catalogue:
        if not message.id:
            continue  # the header
        forms = message.id if isinstance(message.id, tuple) else (message.id,)
        pseudo = tuple(f"⟦{form}⟧" for form in forms)
        message.string = pseudo if isinstance(message.id, tuple) else pseudo[0]
    folder = tmp_path / "pseudo" / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with (folder / "messages.mo").open("wb") as mo:
        write_mo(mo, catalogue)
    # Loaded last, the pseudo-catalogue's messages win over the shipped French.
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = f"translations;{tmp_path / 'pseudo'}"
    admin_text.init_app(app)  # Flask-Babel reads its directories when it is installed
    _forget_loaded_catalogues(app)
    yield
    _forget_loaded_catalogues(app)


def _forget_loaded_catalogues(app: Flask) -> None:
    # Flask-Babel keeps loaded catalogues per locale for the whole process, whichever app
    # loaded them: no other test may read the pseudo French, nor this one a real one.
    with app.app_context():
        admin_text.babel.domain_instance.cache.clear()


def test_a_refusals_words_come_from_the_catalogue(
    client: FlaskClient, app: Flask, shop_id: uuid.UUID, pseudo_french: None
) -> None:
    french = _negative_limit(client, app, **{"Accept-Language": "fr"})
    english = _negative_limit(client, app)

    assert french.get_json()["error"]["message"] == (
        "⟦an approval limit is a whole, non-negative number of minor units "
        "(4800 is 48,00\u00a0$US)⟧"
    )
    assert english.get_json()["error"]["message"] == ENGLISH


def test_a_refusal_is_said_in_the_callers_language_and_recorded_in_english(
    client: FlaskClient, app: Flask, shop_id: uuid.UUID, session: Session, pseudo_french: None
) -> None:
    response = _put(
        client,
        app,
        APPROVER,
        f"/api/staff/{OWNER}",
        {"role": "viewer"},
        **{"Accept-Language": "fr"},
    )

    assert response.status_code == 403
    error = response.get_json()["error"]
    assert error["code"] == "role_not_allowed"
    # The sentence and the role and deed it names, each through the catalogue.
    assert error["message"] == f"⟦{APPROVER} is a ⟦approver⟧ and may not ⟦manage staff⟧⟧"
    [refusal] = session.scalars(
        select(AuditEvent).where(
            AuditEvent.shop_id == shop_id, AuditEvent.kind == "request.refused"
        )
    ).all()
    assert refusal.data["code"] == "role_not_allowed"
    assert refusal.data["message"] == f"{APPROVER} is a approver and may not manage staff"
