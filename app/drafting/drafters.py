"""The drafter interface, the Claude drafter, and choosing between it and the rules.

Every drafter answers :meth:`Drafter.draft` with a :class:`DraftRun`: the checked
:class:`~app.drafting.result.CaseDraft` plus what the run cost. The Claude drafter's
sequence:

1. build the prompt (:mod:`app.drafting.prompt`): instructions and policy as cached
   system blocks, the case as one user message;
2. ask through the Messages API with the draft schema as a forced tool
   (:func:`integrations.anthropic.messages.ask_with_tool`: the SDK's own timeout and
   retries of 429, 529 and dropped connections);
3. parse the tool's input with :func:`~app.drafting.result.parse_draft`.

A model that cannot be reached, refuses, answers without the tool or answers outside
the schema yields "needs a person" with the failure named, never an action. Without an
API key the offline rules draft (:class:`~app.drafting.offline.OfflineDrafter`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.drafting.brief import CaseBrief
from app.drafting.offline import OfflineDrafter
from app.drafting.prompt import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    canary_for,
    case_message,
    instructions,
    policy_text,
)
from app.drafting.result import (
    DRAFT_SCHEMA,
    CaseDraft,
    MalformedDraft,
    NextStep,
    draft_dict,
    parse_draft,
)
from app.settings import Settings
from integrations.anthropic.messages import (
    ModelUnavailable,
    SystemBlock,
    ToolSpec,
    Usage,
    ask_with_tool,
    client,
)

MAX_TOKENS = 1500


@dataclass(frozen=True)
class DraftRun:
    draft: CaseDraft
    drafter: str
    model: str | None = None
    usage: Usage | None = None
    # Why the model's answer was not used ("the model was unavailable (overloaded)",
    # "refusal", "malformed: ..."), if it was not.
    failure: str | None = None


class Drafter(Protocol):
    @property
    def name(self) -> str: ...

    def run(self, brief: CaseBrief) -> DraftRun: ...


class RulesDrafter:
    """The offline rules, as a :class:`Drafter`."""

    name = "offline"

    def __init__(self) -> None:
        self._rules = OfflineDrafter()

    def run(self, brief: CaseBrief) -> DraftRun:
        return DraftRun(parse_draft(draft_dict(self._rules.draft(brief))), self.name)


@dataclass(frozen=True)
class ClaudeDrafter:
    api_key: str
    base_url: str | None
    model: str
    timeout_seconds: float
    max_retries: int
    # This deployment's canary, planted in the instructions (prompt.py::canary_for).
    canary: str = ""
    name: str = "claude"

    def __post_init__(self) -> None:
        # The SDK and its client as the drafter is made (a worker makes it as it starts),
        # not in the first case's time.
        client(self.api_key, self.base_url or None, float(self.timeout_seconds), self.max_retries)

    def run(self, brief: CaseBrief) -> DraftRun:
        try:
            answer = ask_with_tool(
                api_key=self.api_key,
                base_url=self.base_url or None,
                model=self.model,
                system=[
                    SystemBlock(instructions(self.canary), cached=True),
                    SystemBlock(policy_text(brief), cached=True),
                ],
                messages=[{"role": "user", "content": case_message(brief)}],
                tool=ToolSpec(TOOL_NAME, TOOL_DESCRIPTION, DRAFT_SCHEMA),
                max_tokens=MAX_TOKENS,
                timeout_s=self.timeout_seconds,
                max_retries=self.max_retries,
            )
        except ModelUnavailable as failed:
            return self._person(brief, f"the model was unavailable ({failed.reason})")
        if answer.stop_reason == "refusal":
            return self._person(brief, "the model declined to draft", answer.usage, "refusal")
        if answer.tool_input is None:
            return self._person(brief, "the model answered without the draft", answer.usage)
        try:
            draft = parse_draft(answer.tool_input)
        except MalformedDraft as malformed:
            return self._person(
                brief, "the model's draft was malformed", answer.usage, f"malformed: {malformed}"
            )
        return DraftRun(draft, self.name, answer.model, answer.usage)

    def _person(
        self, brief: CaseBrief, why: str, usage: Usage | None = None, failure: str | None = None
    ) -> DraftRun:
        draft = CaseDraft(
            summary=f"No draft: {why}. A person takes this case.",
            step=NextStep.NEEDS_PERSON,
            free_text="",
            needs_person_reason=why,
        )
        return DraftRun(draft, self.name, self.model, usage, failure or why)


def drafter_for(settings: Settings) -> Drafter:
    """Claude when a key is set, else the offline rules."""
    if settings.anthropic_api_key:
        return ClaudeDrafter(
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url or None,
            model=settings.anthropic_model,
            timeout_seconds=settings.anthropic_timeout_seconds,
            max_retries=settings.anthropic_max_retries,
            canary=canary_for(settings.secret_key),
        )
    return RulesDrafter()
