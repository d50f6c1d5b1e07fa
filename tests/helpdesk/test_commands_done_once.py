"""An agent's command in a helpdesk ticket is done once, and a run of its call that failed
is finished by the next run of the same call.

A command is claimed by the run that first reads it; until it is done, only a run of the
same call takes it up again (to act on it); once done, the same call's runs post its kept
note (the helpdesk holds it once) and act on nothing; another call's run never touches it.
Done twice, the second effect is rolled back with the error.
"""

from __future__ import annotations

import uuid

import pytest
from helpdesk_support import shop_with_a_ticket
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.models import Case
from app.clock import utcnow
from app.conversations.models import HelpdeskCommand
from app.helpdesk.tickets import (
    AgentCommand,
    Command,
    TakenCommand,
    command_done,
    take_command,
)

APPROVE = AgentCommand(Command.APPROVE, note_id=9_000_000_001, agent_email="sam@example.com")


@pytest.fixture
def ticket(session: Session) -> tuple[uuid.UUID, uuid.UUID]:
    """A shop and its ticket's conversation: (shop id, conversation id)."""
    return shop_with_a_ticket(session, 41)


def _take(session: Session, ticket: tuple[uuid.UUID, uuid.UUID], call: str) -> TakenCommand | None:
    shop_id, conversation_id = ticket
    taken = take_command(
        session,
        shop_id=shop_id,
        conversation_id=conversation_id,
        command=APPROVE,
        call_key=call,
        now=utcnow(),
    )
    session.commit()
    return taken


def test_a_claimed_command_is_taken_up_again_only_by_its_own_call_until_done(
    session: Session, ticket: tuple[uuid.UUID, uuid.UUID]
) -> None:
    shop_id, _ = ticket
    first = _take(session, ticket, "call-1")
    assert first == TakenCommand(APPROVE)

    # The run failed before acting: its call's next run acts; another call's run does not.
    assert _take(session, ticket, "call-2") is None
    assert _take(session, ticket, "call-1") == first

    command_done(
        session, shop_id=shop_id, command=APPROVE, note="Approved.", action_id=None, now=utcnow()
    )
    session.commit()
    # Done: the call's next run posts its note again (the failed run may not have) and
    # acts on nothing.
    assert _take(session, ticket, "call-1") == TakenCommand(APPROVE, done_note="Approved.")
    assert _take(session, ticket, "call-2") is None


def test_a_command_done_twice_rolls_the_second_effect_back(
    session: Session, ticket: tuple[uuid.UUID, uuid.UUID]
) -> None:
    shop_id, _ = ticket
    _take(session, ticket, "call-1")
    command_done(
        session, shop_id=shop_id, command=APPROVE, note="Approved.", action_id=None, now=utcnow()
    )
    session.commit()

    session.add(Case(shop_id=shop_id, subject="a second effect", request_text=""))
    with pytest.raises(RuntimeError, match="done already"):
        command_done(
            session, shop_id=shop_id, command=APPROVE, note="Again.", action_id=None, now=utcnow()
        )
    session.rollback()

    assert session.scalars(select(Case)).all() == []
    assert session.scalars(select(HelpdeskCommand.note)).one() == "Approved."
