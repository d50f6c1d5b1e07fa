"""Which order a conversation is about: picked only by an exact match, never guessed."""

from __future__ import annotations

import uuid

import pytest

from app.cases.models import Order
from app.conversations.linking import link_order


def _order(name: str, total: int, currency: str = "usd", paid: tuple[int, ...] = ()) -> Order:
    return Order(
        id=uuid.uuid4(),
        name=name,
        total=total,
        currency=currency,
        lines=[{"id": f"l{i}", "title": "x", "quantity": 1, "paid": p} for i, p in enumerate(paid)],
    )


APRONS = _order("#1001", 9600, paid=(4800, 4800))
NAPKINS = _order("#1002", 3000, paid=(3000,))
YEN = _order("#1003", 4800, currency="jpy", paid=(4800,))


@pytest.mark.parametrize(
    ("text", "picked", "how"),
    [
        ("the apron from #1002 is torn", "#1002", "named"),
        ("order 1001 arrived damaged", "#1001", "named"),
        ("Order number 1002 please", "#1002", "named"),
        ("I paid $30.00 and it broke", "#1002", "amount"),
        ("it was 30 USD", "#1002", "amount"),
        ("one line was $48", "#1001", "amount"),
        ("¥4800 for the set", "#1003", "amount"),
    ],
)
def test_an_exact_name_or_amount_picks_the_order(text: str, picked: str, how: str) -> None:
    linking = link_order([text], [APRONS, NAPKINS, YEN])

    assert linking.picked is not None and linking.picked.name == picked
    assert linking.how == how
    assert linking.unmatched == ()


@pytest.mark.parametrize(
    ("text", "unmatched"),
    [
        ("it was about $55.00", ("$55.00",)),
        ("order #2002 never came", ("#2002",)),
        ("my refund please", ()),
        ("€30 order", ("€30",)),  # the napkins were paid in dollars
        ("$30.001", ("$30.001",)),  # not a whole number of cents
    ],
)
def test_anything_else_leaves_the_choice_open_and_shows_what_matched_nothing(
    text: str, unmatched: tuple[str, ...]
) -> None:
    linking = link_order([text], [APRONS, NAPKINS])

    assert linking.picked is None and linking.ambiguous
    assert linking.unmatched == unmatched


def test_two_orders_named_are_two_candidates_not_a_pick() -> None:
    linking = link_order(["#1001 and #1002 both"], [APRONS, NAPKINS])

    assert linking.picked is None
    assert [order.name for order in linking.candidates] == ["#1001", "#1002"]


def test_a_single_order_needs_no_pick_unless_the_customer_quoted_something_else() -> None:
    assert link_order(["refund please"], [APRONS]).how == "only_order"
    assert link_order(["refund of my $20 order"], [APRONS]).picked is None


def test_an_order_chosen_earlier_stands_until_another_is_named() -> None:
    assert link_order(["refund please"], [APRONS, NAPKINS], chosen=NAPKINS).how == "chosen"
    assert link_order(["no, #1001"], [APRONS, NAPKINS], chosen=NAPKINS).picked is APRONS
