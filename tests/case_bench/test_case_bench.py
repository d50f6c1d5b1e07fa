"""The case bench's machinery on a small plan: every situation, both drafters, every door,
judged.

Runs ``bench_cases.run`` on 24 cases (each of the twelve situations twice, once per
drafter where both draft it, spread over the widget with the staff API or the admin, the
Gorgias macros and the MCP agent): the Stripe, Gorgias and Anthropic sandboxes, two web
apps under gunicorn, worker processes and the sweeper, as the bench does. The three
invariants read from the provider and the tickets must be zero, every case must end as
its plan says, and every approval the agent slipped in must be refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_cases import only_through, run
from case_shops import DOORS, SITUATIONS, Door, generate

CASES = 2 * len(SITUATIONS)


def test_the_plan_covers_every_situation_door_and_drafter() -> None:
    plan = generate(CASES, seed=39)

    assert {case.situation for case in plan.cases} == set(SITUATIONS)
    assert {case.door for case in plan.cases} == set(DOORS)
    assert {case.drafter for case in plan.cases} == {"offline", "claude", "agent"}
    assert {shop.currency for shop in plan.shops.values()} >= {"usd", "eur", "jpy"}


def test_the_plan_through_some_doors_keeps_their_cases_and_customers_alone() -> None:
    whole = generate(CASES, seed=39)
    doors = frozenset({Door.GORGIAS, Door.MCP})

    plan = only_through(whole, doors)

    assert plan.cases == [case for case in whole.cases if case.door in doors]
    assert sorted(c.number for shop in plan.shops.values() for c in shop.customers) == sorted(
        case.customer.number for case in plan.cases
    )


@pytest.mark.slow
def test_a_small_bench_keeps_the_invariants_and_ends_every_case_as_planned() -> None:
    report = run(CASES, seed=39, concurrency=4)

    assert report.broken == {name: [] for name in report.broken}
    wrong = [
        (j.ran.plan.number, j.ran.plan.situation.value, j.ran.plan.door.value, j.why)
        for j in report.judged
        if not j.outcome_ok
    ]
    assert wrong == []
    figures = report.figures()
    assert figures["staff_approvals_per_routine_case"] == 1
    # One click a routine case on every door: a ticket's case is prepared as it arrives.
    clicks = {
        row["door"]: row["clicks_per_routine_case"]
        for row in figures["per_door"]
        if row["routine_cases"]
    }
    assert clicks and set(clicks.values()) == {1.0}, clicks
    assert figures["staff_clicks_per_routine_case"] == 1
    assert figures["facts_typed_twice"] == 0
    assert figures["needless_escalations"] == 0
    assert figures["agent_approvals_slipped_in"] > 0
    assert figures["agent_approvals_refused"] == figures["agent_approvals_slipped_in"]
    assert {row["door"] for row in figures["per_door"] if row["correct"]} == {
        door.value for door in DOORS
    }
