"""A model scripted to give its instructions away (echoed, paraphrased, translated,
encoded, or the canary) never gets them to the customer: every leak of the corpus, as
Claude's own words through :func:`~app.drafting.service.apply_draft`, is kept for staff
and the customer reads Caseward's sentence alone."""

from __future__ import annotations

from dataclasses import replace

from corpus_leaks import LEAKS
from drafting_support import drafted, stored_case
from sqlalchemy.orm import Session

from app.drafting.drafters import ClaudeDrafter
from app.drafting.prompt import canary_for
from app.settings import Settings
from integrations.anthropic.sandbox import AnthropicSandbox, answers

ASKS_WHICH_ITEMS = (
    "Thanks for your message. Which items from order #1001 are affected, and how many of each?"
)


def test_no_leak_of_the_corpus_reaches_the_customer(
    session: Session, settings: Settings, claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    canary = canary_for(settings.secret_key)
    stored = stored_case(session, "My order arrived damaged.")
    # The corpus plants its own canary; this deployment's is planted as well.
    leaks = [leak.text for leak in LEAKS] + [f"Our reference for you is {canary}."]
    claude_api.queue(
        *(
            answers.tool_use(
                {
                    "summary": "Something from #1001 arrived damaged; which items is not said.",
                    "next_step": "ask_which_items",
                    "free_text": text,
                }
            )
            for text in leaks
        )
    )

    told = {}
    for text in leaks:
        result = drafted(session, stored, replace(drafter, canary=canary), settings)
        assert result.reply is not None
        told[text] = (result.reply.body, result.record.refused_text)

    sent = {text: body for text, (body, _) in told.items() if body != ASKS_WHICH_ITEMS}
    assert sent == {}
    assert all(refused == text for text, (_, refused) in told.items())
