"""The Claude drafter on the real SDK against the Messages API sandbox: what the model is
sent (the forced tool, cached instructions and policy, the customer's words redacted
inside their element), and what every kind of answer, or no answer, becomes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from drafting_support import (
    MODEL,
    SHOP_NAME,
    aprons_order,
    basket_order,
    brief_from,
    claude_drafter,
    shows_number,
)

from app.drafting.brief import CaseBrief
from app.drafting.drafters import ClaudeDrafter
from app.drafting.prompt import (
    INSTRUCTIONS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    case_message,
    policy_text,
)
from app.drafting.redaction import CARD_LABEL, EMAIL_LABEL
from app.drafting.result import DRAFT_SCHEMA, CaseDraft, LinePick, NextStep, StepProposal
from integrations.anthropic.sandbox import AnthropicSandbox, answers
from integrations.provider import ActionKind

TORN = "One of the two aprons arrived torn."
APRON_DRAFT: dict[str, Any] = {
    "summary": "One of two linen aprons from #1001 arrived torn.",
    "next_step": "propose",
    "reply": "I'm sorry about the apron. I've prepared a refund for our team to review.",
    "proposal": {
        "kind": "refund",
        "order": "#1001",
        "lines": [{"line_id": "L1", "quantity": 1}],
        "reason": "One apron arrived torn.",
    },
    "needs_person_reason": None,
}
CACHED = {"type": "ephemeral"}


def torn_apron_brief(*texts: str) -> CaseBrief:
    order = aprons_order()
    return brief_from(texts or (TORN,), [order, basket_order()], chosen=order)


def assert_needs_person(run_draft: CaseDraft) -> None:
    """The answer was not used: a person takes the case, and nothing is proposed."""
    assert run_draft.step == NextStep.NEEDS_PERSON
    assert run_draft.proposal is None
    assert run_draft.needs_person_reason
    assert f"A member of the {SHOP_NAME} team will reply" in run_draft.reply


def test_the_forced_tool_input_becomes_the_draft(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    claude_api.queue(answers.tool_use(APRON_DRAFT))

    run = drafter.run(torn_apron_brief())

    assert run.draft == CaseDraft(
        summary="One of two linen aprons from #1001 arrived torn.",
        step=NextStep.PROPOSE,
        reply="I'm sorry about the apron. I've prepared a refund for our team to review.",
        proposal=StepProposal(
            kind=ActionKind.REFUND,
            order="#1001",
            lines=(LinePick("L1", 1),),
            reason="One apron arrived torn.",
        ),
    )
    assert (run.drafter, run.model, run.failure) == ("claude", MODEL, None)


def test_the_model_is_made_to_call_the_draft_tool_under_cached_instructions_and_policy(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    claude_api.queue(answers.tool_use(APRON_DRAFT))
    brief = torn_apron_brief()

    drafter.run(brief)

    [sent] = claude_api.request_bodies()
    assert sent["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert sent["tools"] == [
        {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": DRAFT_SCHEMA}
    ]
    assert sent["system"] == [
        {"type": "text", "text": INSTRUCTIONS, "cache_control": CACHED},
        {"type": "text", "text": policy_text(brief), "cache_control": CACHED},
    ]
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


def test_words_instead_of_the_tool_go_to_a_person(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter
) -> None:
    claude_api.queue(answers.text("Sure! Your refund of $48.00 is approved."))

    run = drafter.run(torn_apron_brief())

    assert_needs_person(run.draft)
    assert run.failure == "the model answered without the draft"
    assert "$48.00" not in run.draft.reply


@pytest.mark.parametrize(
    "malformed",
    [
        pytest.param({**APRON_DRAFT, "amount": 50000}, id="an amount"),
        pytest.param({**APRON_DRAFT, "next_step": "approve"}, id="next step approve"),
        pytest.param(
            {**APRON_DRAFT, "proposal": {**APRON_DRAFT["proposal"], "approved": True}},
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
            id="no items",
        ),
        pytest.param({**APRON_DRAFT, "next_step": "answer"}, id="a proposal without propose"),
    ],
)
def test_a_draft_outside_the_schema_goes_to_a_person(
    claude_api: AnthropicSandbox, drafter: ClaudeDrafter, malformed: dict[str, Any]
) -> None:
    if malformed["next_step"] == "answer":
        # The schema cannot say "a proposal only with propose"; the parser does.
        claude_api.queue(answers.tool_use(malformed))
    else:
        claude_api.queue(answers.malformed_tool_input(malformed))

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
