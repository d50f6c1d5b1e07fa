"""Caseward's own sentences to a customer: every statement about money, status, amounts,
dates or what happens next that a customer reads is composed here, from what the
provider reported, the approved amount and the shop's policy, never from a drafter's
words.

Each is a catalogue :class:`~app.words.Sentence`, so the customer reads it in the
storefront's language (the customer catalogue is extracted from the modules that speak
to customers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.conversations.language import for_customer, supported_language
from app.execution.models import ActionStatus
from app.money import Money
from app.words import Sentence, joined_by_and, one_after_another, said
from integrations.provider import ActionKind

# How long money usually takes to show once the provider has it, per kind, in words.
_USUALLY = {
    ActionKind.REFUND: said("Refunds usually show on your statement within 5 to 10 business days."),
}


def status_update(
    kind: str, status: str, amount: Money | None, *, shop_name: str, owner: Sentence
) -> Sentence | None:
    """The customer's message for an action now at ``status``; None for statuses the
    customer is not told about (ours, before the provider has spoken)."""
    what = action_words(kind, amount)
    if status == ActionStatus.PENDING:
        usually = _USUALLY.get(ActionKind(kind)) if kind in set(ActionKind) else None
        return said(
            "Your %(what)s has been submitted to the payment provider. %(usually)s",
            what=what,
            usually=usually or said("We will let you know here when it is complete."),
        )
    if status == ActionStatus.SUCCEEDED:
        if kind == ActionKind.REFUND:
            return said(
                "Your refund of %(amount)s has been made to your original payment method. "
                "Depending on your bank it can take 5 to 10 business days to show.",
                amount=amount or said("the agreed amount"),
            )
        if kind == ActionKind.CUSTOMER_CREDIT:
            return said(
                "Store credit of %(amount)s has been added to your account at %(shop)s.",
                amount=amount or said("the agreed amount"),
                shop=shop_name,
            )
        return said("Your %(what)s is complete.", what=what)
    if status in ActionStatus.PROVIDER_FAILED:
        return said(
            "Your %(what)s could not be completed by the payment provider. Nothing has been "
            "taken from you. %(who)s will contact you here about what happens next.",
            what=what,
            who=owner,
        )
    return None


def action_words(kind: str, amount: Money | None) -> Sentence:
    """ "refund of $48.00", "store credit of $20.00", "discount": the action, for the customer."""
    if kind == ActionKind.REFUND:
        return said("refund of %(amount)s", amount=amount) if amount else said("refund")
    if kind == ActionKind.CUSTOMER_CREDIT:
        return said("store credit of %(amount)s", amount=amount) if amount else said("store credit")
    if kind == ActionKind.DISCOUNT:
        return said("discount")
    return said("subscription change")


# ------------------------------------------------------------------ a drafted case's reply


@dataclass(frozen=True)
class Item:
    """Some items of one order line, as the customer reads them."""

    title: str
    quantity: int


def items_words(items: Sequence[Item]) -> Sentence:
    """ "1 x Linen apron and 2 x Tea towel"."""
    return joined_by_and(
        [said("%(count)s x %(title)s", count=item.quantity, title=item.title) for item in items]
    )


def prepared_for_review(kind: str, amount: Money, items: Sequence[Item], order: str) -> Sentence:
    """A drafted proposal now waits for a person at the shop."""
    return said(
        "I've prepared a %(what)s for %(items)s from order %(order)s for our team to review. "
        "I will tell you here as soon as the payment provider confirms it.",
        what=action_words(kind, amount),
        items=items_words(items),
        order=order,
    )


def approved_by_policy(
    kind: str, amount: Money, items: Sequence[Item], order: str, *, shop_name: str
) -> Sentence:
    """A drafted proposal the shop's written policy approved: it is on its way to the
    provider, which has not answered yet."""
    return said(
        "Under %(shop)s's policy, your %(what)s for %(items)s from order %(order)s is "
        "approved and is being sent to the payment provider. I will tell you here as soon "
        "as it confirms it.",
        shop=shop_name,
        what=action_words(kind, amount),
        items=items_words(items),
        order=order,
    )


def offer(options: Sequence[Sentence]) -> Sentence:
    """The choices the shop's policy offers instead of a refund alone."""
    return said("I can %(options)s. Which would you prefer?", options=_either(options))


# What the shopper's buttons say for each offer (app.drafting.service.offers), by its id.
CHOICE_LABELS = {
    "refund": said("Refund to my original payment method"),
    "store_credit": said("Store credit instead"),
    "replacement_discount": said("A discount on a replacement"),
}


def offer_refund(amount: Money) -> Sentence:
    return said("refund %(amount)s to your original payment method", amount=amount)


def offer_store_credit(amount: Money, *, shop_name: str) -> Sentence:
    return said(
        "add %(amount)s in store credit to your account at %(shop)s", amount=amount, shop=shop_name
    )


def offer_replacement_discount(amount: Money) -> Sentence:
    return said("give you a discount of %(amount)s on a replacement", amount=amount)


def chosen(kind: str, amount: Money) -> Sentence:
    """The customer chose from an offer; the choice is prepared for review."""
    return said(
        "Thank you. I've prepared a %(what)s for our team to review. I will tell you here as "
        "soon as the payment provider confirms it.",
        what=action_words(kind, amount),
    )


def ask_to_verify() -> Sentence:
    return said(
        "To keep your order details private, please verify it's you first: enter your order "
        "number and the email you used, and we will send you a code."
    )


def ask_which_order(orders: Sequence[str]) -> Sentence:
    return said("Which order is this about? I can see %(orders)s.", orders=", ".join(orders))


def ask_which_items(order: str) -> Sentence:
    return said("Which items from order %(order)s are affected, and how many of each?", order=order)


def with_a_person(shop_name: str) -> Sentence:
    """The case is in front of a person at the shop."""
    return said(
        "A member of the %(shop)s team will reply here, usually within one business day.",
        shop=shop_name,
    )


def looking_into_it() -> Sentence:
    return said("We are looking into it and will reply here as soon as we can.")


def thanks() -> Sentence:
    """What opens a reply whose drafter's own words were not kept."""
    return said("Thanks for your message.")


def request_with_team() -> Sentence:
    return said("Your request is with our team; I will tell you here as soon as there is news.")


def case_status(actions: Sequence[tuple[str, str, Money | None]]) -> Sentence | None:
    """Where the case's newest action stands, as the provider reported it (kind, status,
    amount); None when no action was sent yet."""
    for kind, status, amount in reversed(actions):
        what = action_words(kind, amount)
        if status in ActionStatus.PROVIDER_PENDING:
            return said(
                "Your %(what)s was submitted to the payment provider, which has not "
                "confirmed it yet.",
                what=what,
            )
        if status == ActionStatus.SUCCEEDED:
            return said("Your %(what)s is done: the payment provider confirmed it.", what=what)
        if status in ActionStatus.PROVIDER_FAILED:
            return said("Your %(what)s could not be completed.", what=what)
        if status in ActionStatus.IN_FLIGHT:
            return said("Your %(what)s was approved and is being sent.", what=what)
    return None


@dataclass(frozen=True)
class Shipment:
    order: str
    shipped: bool  # the store sent it: a fulfilment exists
    delivered: bool
    carrier: str | None = None
    tracking_number: str | None = None
    tracking_url: str | None = None
    estimated_delivery: str | None = None  # an ISO date


def shipment_words(shipment: Shipment) -> Sentence:
    """An order's shipment as Shopify's fulfilments report it."""
    if shipment.delivered:
        return said("Order %(order)s was delivered.", order=shipment.order)
    if not shipment.shipped:
        return said(
            "Order %(order)s has not shipped yet. We will send tracking details when it does.",
            order=shipment.order,
        )
    parts = [
        said(
            "Order %(order)s is on its way with %(carrier)s.",
            order=shipment.order,
            carrier=shipment.carrier,
        )
        if shipment.carrier
        else said("Order %(order)s is on its way.", order=shipment.order)
    ]
    if shipment.tracking_number and shipment.tracking_url:
        parts.append(
            said(
                "Tracking number: %(number)s (%(url)s).",
                number=shipment.tracking_number,
                url=shipment.tracking_url,
            )
        )
    elif shipment.tracking_number:
        parts.append(said("Tracking number: %(number)s.", number=shipment.tracking_number))
    if shipment.estimated_delivery:
        parts.append(said("Expected by %(date)s.", date=shipment.estimated_delivery))
    return one_after_another(parts)


def _either(options: Sequence[Sentence]) -> Sentence:
    whole = options[0]
    for option in options[1:]:
        whole = said("%(first)s, or %(then)s", first=whole, then=option)
    return whole


def reply_text(free_text: str, ours: Sequence[Sentence], locale: str | None) -> str:
    """The reply a customer reads: the drafter's checked words, then Caseward's sentences,
    in the customer's language."""
    parts = [free_text] if free_text else []
    parts.extend(for_customer(sentence, locale) for sentence in ours)
    joiner = "" if supported_language(locale) == "ja" else " "
    return joiner.join(parts)
