"""The storefront chat in the shopper's language: the storefront's locale, sent with every
request, is kept by the conversation, and what Caseward says there (the greeting, the
widget's labels, the case's status, a person's promise, a refused code, the code's mail, a
refund's update) is said in it, money as that locale writes it. A language the chat does
not speak reads English. And an order number the shopper already wrote is offered to the
verify step, so it is never typed twice."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, Shopper, newest_code

from app.actors import WORKER
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.conversations.models import Conversation, Message
from app.conversations.updates import tell_customer
from app.execution.models import Action, ActionStatus
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.mail import Outbox

DOMAIN = "linen-langues.myshopify.com"
NAME = "Linen & Loom"
EMAIL = "maya@example.com"


@pytest.fixture
def shop(session: Session) -> Shop:
    shop = Shop(domain=DOMAIN, name=NAME)
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id="olivia.owner", role=StaffRole.OWNER))
    session.commit()
    return shop


def _shopper(client: FlaskClient, locale: str) -> Shopper:
    return Shopper(client, DOMAIN, secret=APP_SECRET, locale=locale)


def _conversation(session: Session) -> Conversation:
    session.expire_all()
    return session.scalars(select(Conversation)).one()


def _refund_told(session: Session, amount: int, currency: str, *statuses: ActionStatus) -> Action:
    """A refund of the conversation's case, and the shopper told each of ``statuses`` as
    the provider reports them."""
    case = session.get_one(Case, _conversation(session).case_id)
    now = utcnow()
    proposal = Proposal(
        shop_id=case.shop_id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target="pi_apron",
        amount=amount,
        currency=currency,
        proposed_by="system:drafter",
        status="approved",
        verdict={},
        policy_version=1,
        digest="0" * 64,
    )
    session.add(proposal)
    session.flush()
    action = Action(
        shop_id=case.shop_id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=1,
        digest=proposal.digest,
        kind="refund",
        provider="stripe",
        target="pi_apron",
        amount=amount,
        currency=currency,
        idempotency_key=f"caseward-action-{uuid.uuid4()}",
        approval_expires_at=now + timedelta(hours=1),
    )
    session.add(action)
    for status in statuses:
        action.status = status
        session.flush()
        tell_customer(session, action=action, case=case, actor=WORKER, now=utcnow())
    session.commit()
    return action


def _mayas_order(session: Session, shop: Shop) -> None:
    maya = Customer(shop_id=shop.id, email=EMAIL, name="Maya")
    session.add(maya)
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=maya.id,
            name="#1001",
            currency="eur",
            total=9600,
            payment_provider="stripe",
            lines=[{"id": "apron", "title": "Linen apron", "quantity": 2, "paid": 9600}],
        )
    )
    session.commit()


def test_a_french_shopper_is_greeted_labelled_and_answered_in_french(
    shop: Shop, client: FlaskClient
) -> None:
    shopper = _shopper(client, "fr")

    before = shopper.state()
    state = shopper.say("Mon tablier est arrivé déchiré.")
    person = shopper.post("/chat/person", {}).get_json()

    assert (
        before["greeting"]
        == state["greeting"]
        == f"Bonjour\u00a0! Que peut faire {NAME} pour vous\u00a0?"
    )
    for labels in (before["labels"], state["labels"]):
        assert labels["open"] == "Discutez avec nous"
        assert labels["verify"] == "Confirmer votre identité"
        assert labels["sentTo"] == "Nous avons envoyé un code à %(to)s."
    assert state["case"]["status_text"] == "Nous examinons votre demande."
    assert person["messages"][-1]["text"].startswith(
        f"Un membre de l'équipe {NAME} prend le relais et vous répondra dans cette conversation"
    )
    assert person["case"]["status_text"] == "Un membre de notre équipe s'en occupe."


def test_a_french_shoppers_refused_code_and_email_are_said_in_french_beside_their_fields(
    shop: Shop, client: FlaskClient
) -> None:
    shopper = _shopper(client, "fr")
    shopper.say("Je voudrais un remboursement.")

    no_email = shopper.post("/chat/verification", {"order": "#1001", "email": "maya"})
    shopper.post("/chat/verification", {"order": "#4242", "email": "jo@example.com"})
    wrong = shopper.post("/chat/verification/code", {"code": "000000"})

    assert no_email.status_code == wrong.status_code == 400
    assert no_email.get_json()["error"] == {
        "code": "invalid_input",
        "field": "email",
        "message": "Indiquez l'e-mail utilisé pour la commande.",
    }
    assert wrong.get_json()["error"] == {
        "code": "invalid_input",
        "field": "code",
        "message": "Ce code n'est pas le bon. Vérifiez l'e-mail et réessayez.",
    }


def test_a_french_shoppers_refund_update_says_the_euros_the_french_way(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    shopper = _shopper(client, "fr")
    shopper.say("Mon tablier est arrivé déchiré.")

    action = _refund_told(session, 4800, "eur", ActionStatus.PENDING, ActionStatus.SUCCEEDED)
    state = shopper.state()

    told = [m["text"] for m in state["messages"] if m["from"] == "shop"]
    assert told[-1] == (
        "Votre remboursement de 48,00\u00a0€ a été effectué sur votre moyen de paiement "
        "d'origine. Selon votre banque, il peut mettre 5 à 10 jours ouvrés à apparaître."
    )
    assert told[-2].startswith("Votre remboursement de 48,00\u00a0€ a été transmis")
    assert (
        state["case"]["status_text"] == "Remboursé\u00a0: le prestataire de paiement l'a confirmé."
    )
    [update] = state["case"]["updates"]
    assert update["text"] == (
        "Votre remboursement de 48,00\u00a0€ est effectué\u00a0: le prestataire de paiement "
        "l'a confirmé."
    )
    # What Caseward said is kept as said, for any reader's language.
    kept = session.scalars(
        select(Message.sentence).where(
            Message.about_action_id == action.id, Message.about_status == "succeeded"
        )
    ).one()
    assert kept is not None and kept["message"].startswith("Your refund of %(amount)s")
    assert kept["values"]["amount"] == {"money": {"amount": 4800, "currency": "eur"}}


def test_a_japanese_shoppers_yen_are_shown_without_decimals(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    shopper = _shopper(client, "ja")
    shopper.say("エプロンが破れて届きました。")

    _refund_told(session, 4800, "jpy", ActionStatus.SUCCEEDED)
    state = shopper.state()

    told = state["messages"][-1]["text"]
    assert told.startswith("￥4,800の返金を元のお支払い方法に行いました。")
    assert state["case"]["updates"][0]["text"].startswith("￥4,800の返金が完了しました。")
    assert ".00" not in told


def test_the_storefronts_language_is_kept_and_a_later_supported_one_replaces_it(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    shopper = _shopper(client, "de")
    shopper.say("Meine Schürze kam zerrissen an.")
    assert _conversation(session).locale == "de"

    shopper.locale = "fr-CA"
    in_french = shopper.state()
    assert _conversation(session).locale == "fr_CA"
    shopper.locale = "ko"  # a language the chat does not speak leaves the chat's as it is
    still_french = shopper.state()

    assert _conversation(session).locale == "fr_CA"
    assert in_french["labels"]["send"] == still_french["labels"]["send"] == "Envoyer"


@pytest.mark.parametrize("locale", ["ko", "pt-BR", "xx-NOPE", "<script>", ""])
def test_a_storefront_in_a_language_the_chat_does_not_speak_reads_english(
    shop: Shop, client: FlaskClient, locale: str
) -> None:
    state = _shopper(client, locale).say("My apron arrived torn.")

    assert state["greeting"] == f"Hi! How can {NAME} help?"
    assert state["labels"]["open"] == "Chat with us"
    assert state["case"]["status_text"] == "We are looking into it."


@pytest.mark.parametrize(
    ("locale", "subject", "opening"),
    [
        ("fr", f"Votre code de vérification {NAME}", "Votre code est "),
        ("ja", f"{NAME}の確認コード", "確認コード\uff1a "),
    ],
)
def test_the_code_is_mailed_in_the_shoppers_language(
    shop: Shop,
    client: FlaskClient,
    session: Session,
    settings: Settings,
    locale: str,
    subject: str,
    opening: str,
) -> None:
    _mayas_order(session, shop)
    shopper = _shopper(client, locale)
    shopper.say("#1001")

    shopper.post("/chat/verification", {"order": "#1001", "email": EMAIL})

    outbox = Outbox(settings.mail_outbox_path, settings.mail_from)
    [mail] = outbox.messages(EMAIL)
    assert (mail["Subject"], mail["Content-Language"]) == (subject, locale)
    assert mail.get_content().startswith(opening)
    code = newest_code(outbox, EMAIL)
    verified = shopper.post("/chat/verification/code", {"code": code})
    assert verified.get_json()["identity"]["verified"] is True


def test_an_order_number_the_shopper_wrote_is_offered_to_the_verify_step_until_verified(
    shop: Shop, client: FlaskClient, session: Session, settings: Settings
) -> None:
    _mayas_order(session, shop)
    shopper = _shopper(client, "en")

    nothing_named = shopper.say("My apron arrived torn.")
    named = shopper.say("It was order 1001, two aprons for $96.00.")
    shopper.post("/chat/verification", {"order": named["verification"]["order"], "email": EMAIL})
    code = newest_code(Outbox(settings.mail_outbox_path, settings.mail_from), EMAIL)
    verified = shopper.post("/chat/verification/code", {"code": code}).get_json()

    assert nothing_named["verification"] == {"order": None}
    assert named["verification"] == {"order": "#1001"}
    assert verified["identity"]["verified"] is True
    assert verified["verification"] == {"order": None}
