"""Properties over random facts: a refund the guard lets through never over-refunds."""

from __future__ import annotations

from datetime import timedelta

from guard_builders import NOW, aprons, check, in_flight, payment, propose, provider_refund, usd
from hypothesis import given
from hypothesis import strategies as st

from app.guard import InFlightStatus, Outcome, PolicyRules
from integrations.provider import ACTION_ID_METADATA_KEY, ProviderStatus

ACTION_IDS = [f"act_{n}" for n in range(6)]
# A short duplicate window so that most random refunds are outside it.
POLICY = PolicyRules(duplicate_window=timedelta(minutes=1))

refund_records = st.builds(
    lambda n, amount, status, hours, action_id: provider_refund(
        f"re_{n}", amount, status=status, ago=timedelta(hours=hours), action_id=action_id
    ),
    st.integers(0, 10_000),
    st.integers(1, 6000),
    st.sampled_from(ProviderStatus),
    st.integers(1, 200),
    st.none() | st.sampled_from(ACTION_IDS),
)
ours_in_flight = st.builds(
    lambda action_id, amount, status: in_flight(action_id, usd(amount), status=status),
    st.sampled_from(ACTION_IDS),
    st.integers(1, 6000),
    st.sampled_from(InFlightStatus),
)


@given(
    captured=st.integers(0, 20_000),
    refunds=st.lists(refund_records, max_size=8),
    ours=st.lists(ours_in_flight, max_size=6, unique_by=lambda action: action.action_id),
    requested=st.integers(-100, 20_000),
    own_id=st.none() | st.sampled_from(ACTION_IDS),
)
def test_a_refund_that_is_not_blocked_fits_in_what_was_captured(
    captured: int,
    refunds: list[object],
    ours: list[object],
    requested: int,
    own_id: str | None,
) -> None:
    facts = payment(captured, refunds=refunds)  # type: ignore[arg-type]

    verdict = check(
        propose(amount=usd(requested), proposal_id=own_id),
        facts,
        policy=POLICY,
        in_flight=ours,  # type: ignore[arg-type]
    )

    if verdict.outcome is not Outcome.BLOCKED:
        at_provider = {r.metadata.get(ACTION_ID_METADATA_KEY) for r in facts.refunds}
        still_ours = sum(
            action.amount.amount  # type: ignore[attr-defined]
            for action in ours
            if action.action_id not in at_provider  # type: ignore[attr-defined]
            and action.action_id != own_id  # type: ignore[attr-defined]
        )
        assert requested > 0
        assert facts.refunded + still_ours + requested <= captured


@given(
    store_refunded=st.tuples(st.integers(0, 4800), st.integers(0, 4800)),
    ours=st.lists(
        st.tuples(st.sampled_from(["apron-1", "apron-2"]), st.integers(1, 4800)), max_size=4
    ),
    parts=st.lists(
        st.tuples(st.sampled_from(["apron-1", "apron-2"]), st.integers(1, 4800)),
        min_size=1,
        max_size=2,
        unique_by=lambda part: part[0],
    ),
)
def test_a_line_refund_that_is_not_blocked_fits_in_each_line(
    store_refunded: tuple[int, int],
    ours: list[tuple[str, int]],
    parts: list[tuple[str, int]],
) -> None:
    order = aprons(store_refunded)
    flying = [
        in_flight(f"act_{n}", usd(amount), lines=[(line, amount)])
        for n, (line, amount) in enumerate(ours)
    ]

    verdict = check(
        propose(amount=usd(sum(amount for _, amount in parts)), lines=parts),
        payment(100_000),
        policy=POLICY,
        in_flight=flying,
        order=order,
        now=NOW,
    )

    if verdict.outcome is not Outcome.BLOCKED:
        for line in order.lines:
            pending = sum(amount for name, amount in ours if name == line.id)
            asked = sum(amount for name, amount in parts if name == line.id)
            if asked:
                assert line.refunded + pending + asked <= line.paid
