"""The Claude drafter on the real SDK against the Messages API sandbox: what the model is
sent (the forced tool, cached instructions with the deployment's canary and policy, the
customer's words redacted inside their element), and what every kind of answer, or no
answer, becomes, down to what the customer reads when the model is not heard."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from drafting_support import (
    MODEL,
    SHOP_NAME,
    aprons_order,
    basket_order,
    brief_from,
    claude_drafter,
    drafted,
    shows_number,
    stored_case,
)
from sqlalchemy.orm import Session

from app.drafting.brief import CaseBrief
from app.drafting.drafters import ClaudeDrafter
from app.drafting.prompt import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    canary_for,
    case_message,
    instructions,
    policy_text,
)
from app.drafting.redaction import CARD_LABEL, EMAIL_LABEL
from app.drafting.result import (
    DRAFT_SCHEMA,
    CaseDraft,
    Claim,
    ClaimedLine,
    LinePick,
    NextStep,
    StepProposal,
)
from app.settings import Settings
from integrations.anthropic.sandbox import AnthropicSandbox, answers
from integrations.provider import ActionKind

TORN = "One of the two aprons arrived torn."
APRON_DRAFT: dict[str, Any] = {
    "summary": "One of two linen aprons from #1001 arrived torn.",
    "next_step": "propose",
    "free_text": "I'm sorry about the apron.",
    "claim": {"order": "#1001", "lines": [{"line_id": "L1", "quantity": 1, "why": "torn"}]},
    "proposal": {
        "kind": "refund",
        "order": "#1001",
        "lines": [{"line_id": "L1", "quantity": 1}],
        "reason": "One apron arrived torn.",
    },
    "needs_person_reason": None,
    "tell": [],
}
CACHED = {"type": "ephemeral"}


def torn_apron_brief(*texts: str) -> CaseBrief:
    order = aprons_order()
    return brief_from(texts or (TORN,), [order, basket_order()], chosen=order)


def assert_needs_person(run_draft: CaseDraft) -> None:
    """The answer was not used: a person takes the case, nothing is proposed or claimed,
    and the drafter has no words of its own for the customer."""
    assert run_draft.step == NextStep.NEEDS_PERSON
    assert (run_draft.proposal, run_draft.claim, run_draft.tell) == (None, None, ())
    assert run_draft.needs_person_reason
    assert run_draft.free_text == ""


def test_the_forced_tool_input_becomes_the_draft(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    claude_api.queue(answers.tool_use(APRON_DRAFT))

    run = drafter.run(torn_apron_brief())

    assert run.draft == CaseDraft(
        summary="One of two linen aprons from #1001 arrived torn.",
        step=NextStep.PROPOSE,
        free_text="I'm sorry about the apron.",
        claim=Claim("#1001", (ClaimedLine("L1", 1, "torn"),)),
        proposal=StepProposal(
            kind=ActionKind.REFUND,
            order="#1001",
            lines=(LinePick("L1", 1),),
            reason="One apron arrived torn.",
        ),
    )
    assert (run.drafter, run.model, run.failure) == ("claude", MODEL, None)


def test_the_model_is_made_to_call_the_draft_tool_under_cached_instructions_and_policy(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter, settings: Settings
) -> None:
    claude_api.queue(answers.tool_use(APRON_DRAFT))
    brief = torn_apron_brief()
    canary = canary_for(settings.secret_key)

    replace(drafter, canary=canary).run(brief)

    [sent] = claude_api.request_bodies()
    assert sent["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert sent["tools"] == [
        {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": DRAFT_SCHEMA}
    ]
    assert sent["system"] == [
        {"type": "text", "text": instructions(canary), "cache_control": CACHED},
        {"type": "text", "text": policy_text(brief), "cache_control": CACHED},
    ]
    # The canary a reply must never hold is planted where only the instructions have it.
    assert canary in sent["system"][0]["text"]
    assert canary not in json.dumps([sent["system"][1], sent["messages"], sent["tools"]])
    assert "Refunds within 30 days of delivery (or fulfilment)." in sent["system"][1]["text"]
    # The case is the one user turn, after everything cached: caching spans cases.
    assert sent["messages"] == [{"role": "user", "content": case_message(brief)}]
    assert sent["model"] == MODEL


def test_customer_text_reaches_the_model_only_redacted_inside_its_element(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    claude_api.queue(answers.tool_use(APRON_DRAFT))
    brief = torn_apron_brief(
        TORN,
        "Refund it to my other card 4242 4242 4242 4242 and mail the receipt to "
        "maya.lin@example.com please.",
    )

    drafter.run(brief)

    [sent] = claude_api.request_bodies()
    content = sent["messages"][0]["content"]
    assert (
        '<customer_message author="customer">Refund it to my other card '
        f"{CARD_LABEL} and mail the receipt to {EMAIL_LABEL} please.</customer_message>"
    ) in content
    assert f'<customer_message author="customer">{TORN}</customer_message>' in content
    for body in claude_api.request_bodies():
        raw = json.dumps(body, ensure_ascii=False)
        assert not shows_number(raw, "4242424242424242")
        assert "maya.lin@example.com" not in raw


def test_a_refusal_goes_to_a_person(claude_api: AnthropicSandbox, drafter: ClaudeDrafter) -> None:
    claude_api.queue(answers.refusal())

    run = drafter.run(torn_apron_brief())

    assert_needs_person(run.draft)
    assert run.failure == "refusal"
    assert run.usage is not None and run.usage.input_tokens > 0


def test_words_instead_of_the_tool_go_to_a_person_and_never_to_the_customer(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter, session: Session, settings: Settings
) -> None:
    claude_api.queue(answers.text("Sure! Your refund of $48.00 is approved."))
    stored = stored_case(session, TORN)

    result = drafted(session, stored, drafter, settings)

    assert result.record.next_step == NextStep.NEEDS_PERSON
    assert result.record.failure == "the model answered without the draft"
    assert result.proposal is None
    assert result.reply is not None
    assert result.reply.body == (
        f"Thanks for your message. A member of the {SHOP_NAME} team will reply here, usually "
        "within one business day."
    )


WITHOUT_FREE_TEXT = {key: value for key, value in APRON_DRAFT.items() if key != "free_text"}


@pytest.mark.parametrize(
    ("malformed", "fits_schema"),
    [
        pytest.param({**APRON_DRAFT, "amount": 50000}, False, id="an amount"),
        pytest.param({**APRON_DRAFT, "next_step": "approve"}, False, id="next step approve"),
        pytest.param(
            {**APRON_DRAFT, "proposal": {**APRON_DRAFT["proposal"], "approved": True}},
            False,
            id="an approved proposal",
        ),
        pytest.param(
            {
                **APRON_DRAFT,
                "proposal": {
                    **APRON_DRAFT["proposal"],
                    "lines": [{"line_id": "L1", "quantity": 0}],
                },
            },
            False,
            id="no items",
        ),
        pytest.param(
            {**WITHOUT_FREE_TEXT, "reply": "Your refund of $24.00 is on its way."},
            False,
            id="a reply of its own instead of free text",
        ),
        pytest.param(
            {**APRON_DRAFT, "tell": ["refund_amount"]}, False, id="a fact Caseward does not tell"
        ),
        # The schema cannot say "a proposal only with propose" or "a claim with every
        # proposal"; the parser does.
        pytest.param({**APRON_DRAFT, "next_step": "answer"}, True, id="a proposal without propose"),
        pytest.param({**APRON_DRAFT, "claim": None}, True, id="a proposal without a claim"),
    ],
)
def test_a_draft_outside_the_schema_goes_to_a_person(
    claude_api: AnthropicSandbox,
    drafter: ClaudeDrafter,
    malformed: dict[str, Any],
    fits_schema: bool,
) -> None:
    claude_api.queue(
        answers.tool_use(malformed) if fits_schema else answers.malformed_tool_input(malformed)
    )

    run = drafter.run(torn_apron_brief())

    assert_needs_person(run.draft)
    assert run.failure is not None and run.failure.startswith("malformed: ")


def test_a_429_within_the_retries_still_drafts(
    claude_api: AnthropicSandbox, claude_url: str
) -> None:
    claude_api.queue(
        answers.error(429, "rate_limit_error", retry_after=0.01), answers.tool_use(APRON_DRAFT)
    )

    run = claude_drafter(claude_url, max_retries=2).run(torn_apron_brief())

    assert run.draft.step == NextStep.PROPOSE
    assert run.failure is None
    assert [r.status for r in claude_api.received_requests()] == [429, 200]


def test_overloaded_past_the_retries_goes_to_a_person(
    claude_api: AnthropicSandbox, claude_url: str
) -> None:
    overloaded = answers.error(529, "overloaded_error", retry_after=0.01)
    claude_api.queue(overloaded, overloaded, overloaded, answers.tool_use(APRON_DRAFT))

    run = claude_drafter(claude_url, max_retries=2).run(torn_apron_brief())

    assert_needs_person(run.draft)
    assert run.failure is not None and "overloaded" in run.failure
    assert [r.status for r in claude_api.received_requests()] == [529, 529, 529]


def test_an_answer_slower_than_the_timeout_goes_to_a_person(
    claude_api: AnthropicSandbox, claude_url: str
) -> None:
    claude_api.queue(answers.slow(30, then=answers.tool_use(APRON_DRAFT)))

    run = claude_drafter(claude_url, timeout_seconds=0.2).run(torn_apron_brief())

    assert_needs_person(run.draft)
    assert run.failure is not None and "timeout" in run.failure


def test_one_shop_s_cases_share_the_cached_instructions_and_policy(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    claude_api.set_default(answers.tool_use(APRON_DRAFT))
    first_case = torn_apron_brief()
    second_case = torn_apron_brief("Both tea towels from #1001 arrived ripped.")
    other_shop = brief_from(
        [TORN], [aprons_order()], policy_lines=("Refunds within 14 days of delivery.",)
    )

    first = drafter.run(first_case).usage
    second = drafter.run(second_case).usage
    elsewhere = drafter.run(other_shop).usage

    assert first is not None and second is not None and elsewhere is not None
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens > 0
    # The second case reads all the first one wrote: instructions and policy come first.
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    # Another policy still reads the instructions, and writes its own policy block.
    assert 0 < elsewhere.cache_read_input_tokens < first.cache_creation_input_tokens
    assert elsewhere.cache_creation_input_tokens > 0
    assert min(first.input_tokens, first.output_tokens, second.input_tokens) > 0
