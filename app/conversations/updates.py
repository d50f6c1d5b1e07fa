"""Telling the customer when the provider reports a new status for their case's action.

Heard in the transaction that records the provider's report
(:func:`app.execution.status.apply_provider_answer` announces
:data:`app.execution.events.status_moved`): the update is composed from that
status alone (:func:`app.conversations.to_customer.status_update`) and added to the
conversation the case came from, once per action and status (a unique key on the
message), so a webhook and a look-up reporting the same thing tell the customer once.
The message says it in the conversation's language, money as its locale writes it
(:func:`app.conversations.language.for_customer`), and keeps the sentence as Caseward
said it. The customer's channel shows it (the storefront chat) or delivers it (a helpdesk).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from app.actors import WORKER, Actor
from app.cases.models import Case
from app.conversations.language import for_customer
from app.conversations.models import Conversation, Message
from app.conversations.service import add_reply
from app.conversations.to_customer import status_update
from app.execution.events import status_moved
from app.execution.models import Action
from app.money import Money
from app.shops.models import Shop
from app.words import said


def tell_customer(
    session: Session, *, action: Action, case: Case, actor: Actor, now: datetime
) -> Message | None:
    """The customer's update for the action's new status; None when there is nobody to
    tell, nothing to say about this status, or it was said before."""
    if case.conversation_id is None:
        return None
    conversation = session.get(Conversation, case.conversation_id)
    shop = session.get(Shop, case.shop_id)
    if conversation is None or shop is None:
        return None
    amount = (
        Money(action.amount, action.currency)
        if action.amount is not None and action.currency
        else None
    )
    sentence = status_update(
        action.kind,
        action.status,
        amount,
        shop_name=shop.name,
        owner=said("A member of the %(shop)s team", shop=shop.name),
    )
    if sentence is None:
        return None
    return add_reply(
        session,
        conversation=conversation,
        body=for_customer(sentence, conversation.locale),
        sentence=sentence,
        actor=actor,
        now=now,
        about_action_id=action.id,
        about_status=action.status,
    )


@status_moved.connect
def _tell_of_new_status(action: Action, *, session: Session, case: Case, now: datetime) -> None:
    tell_customer(session, action=action, case=case, actor=WORKER, now=now)
