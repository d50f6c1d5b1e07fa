"""What the guard answers: every check with its reason and facts, and one outcome.

Reasons are :class:`~app.words.Sentence` values, so a page says them in its reader's
language; ``reason`` and ``approval_reason`` are their English, which records, logs and
the JSON API carry. A verdict stored before sentences were kept has only the English,
and reads back as a sentence of that English. Stored verdicts are read back only here
(:meth:`Verdict.from_dict`, :func:`stored_verdict`), never by their keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from app.words import Sentence


class Outcome(StrEnum):
    BLOCKED = "blocked"
    NEEDS_APPROVAL = "needs_approval"
    ALLOWED_BY_POLICY = "allowed_by_policy"


class CheckName(StrEnum):
    """Stable names of the checks, for storage, UI labels and tests."""

    WRITES_ENABLED = "writes_enabled"
    KILL_SWITCH = "kill_switch"
    KIND_ENABLED = "kind_enabled"
    IDENTITY = "identity"
    REASON_ALLOWED = "reason_allowed"
    PROPOSAL_SHAPE = "proposal_shape"
    AMOUNT = "amount"
    TARGET_EXISTS = "target_exists"
    CUSTOMER_MATCHES = "customer_matches"
    ORDER_MATCHES = "order_matches"
    CURRENCY_MATCHES = "currency_matches"
    NOT_ALREADY_AT_PROVIDER = "not_already_at_provider"
    NOT_DUPLICATE = "not_duplicate"
    WITHIN_CLAIM = "within_claim"  # a drafted proposal covers no more than the customer claims
    # refund
    CAPTURED = "captured"
    NOT_DISPUTED = "not_disputed"
    REFUNDABLE_REMAINING = "refundable_remaining"
    LINE_ITEMS = "line_items"
    REFUND_WINDOW = "refund_window"
    # discount
    DISCOUNT_TERMS = "discount_terms"
    # subscriptions
    NOT_CANCELED = "not_canceled"
    CANCEL_TIMING = "cancel_timing"
    SUBSCRIPTION_ACTIVE = "subscription_active"
    CHANGE_TERMS = "change_terms"
    CHANGE_DIFFERS = "change_differs"
    # caps and ceilings
    CUSTOMER_CAP = "customer_cap"
    SHOP_CAP = "shop_cap"
    WITHIN_KIND_CEILING = "within_kind_ceiling"
    # abuse signals: they escalate to a person, never block
    REPEAT_CLAIMS = "repeat_claims"
    OLD_DELIVERY = "old_delivery"
    DELIVERED_BUT_NOT_RECEIVED = "delivered_but_not_received"
    NEW_CUSTOMER_HIGH_VALUE = "new_customer_high_value"
    SHARED_EMAIL = "shared_email"


@dataclass(frozen=True)
class CheckResult:
    """One check: passed or not, what it says to a support agent, and the facts it used.

    Facts hold JSON values only: amounts as minor units next to a ``currency``,
    times as ISO 8601 strings. A check that ``escalates`` is a signal: failing, it asks a
    person to decide instead of blocking (:attr:`Verdict.signals`).
    """

    name: str
    passed: bool
    said: Sentence
    facts: Mapping[str, object] = field(default_factory=dict, hash=False)
    escalates: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))

    @property
    def reason(self) -> str:
        """What the check says, in English."""
        return str(self.said)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        return cls(
            name=str(data["name"]),
            passed=bool(data["passed"]),
            said=_stored_sentence(data.get("said"), data["reason"]),
            facts=dict(data["facts"]),
            escalates=bool(data.get("escalates", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        stored = {
            "name": str(self.name),
            "passed": self.passed,
            "reason": self.reason,
            "said": self.said.to_dict(),
            "facts": dict(self.facts),
        }
        # Kept only for a signal: every other check reads as it was stored before signals.
        return (stored | {"escalates": True}) if self.escalates else stored


@dataclass(frozen=True)
class Verdict:
    """The guard's answer for one proposal under one policy version.

    ``approvals_required`` is 0 only when allowed by policy; for a blocked
    proposal it still says how many people it would need, so no reader can take
    a blocked verdict for one that needs nobody.
    """

    outcome: Outcome
    checks: tuple[CheckResult, ...]
    approvals_required: int
    policy_version: int
    approval_said: Sentence

    @property
    def approval_reason(self) -> str:
        """Why this many approvals (or none, or blocked), in English."""
        return str(self.approval_said)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        """The failing checks that block it; a raised signal is not one of them."""
        return tuple(check for check in self.checks if not check.passed and not check.escalates)

    @property
    def signals(self) -> tuple[CheckResult, ...]:
        """The signals raised: each asks a person to decide, none blocks."""
        return tuple(check for check in self.checks if not check.passed and check.escalates)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why it is blocked: every failing check's reason, in check order."""
        return tuple(check.reason for check in self.failed)

    def check(self, name: str) -> CheckResult:
        """The result of the check called ``name``; KeyError if it did not run."""
        for result in self.checks:
            if result.name == name:
                return result
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "approvals_required": self.approvals_required,
            "approval_reason": self.approval_reason,
            "approval_said": self.approval_said.to_dict(),
            "policy_version": self.policy_version,
            "checks": [check.to_dict() for check in self.checks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """Read a stored :meth:`to_dict`, to show it again; never a substitute for re-checking."""
        return cls(
            outcome=Outcome(data["outcome"]),
            checks=tuple(CheckResult.from_dict(check) for check in data["checks"]),
            approvals_required=int(data["approvals_required"]),
            policy_version=int(data["policy_version"]),
            approval_said=_stored_sentence(data.get("approval_said"), data["approval_reason"]),
        )


def stored_verdict(data: Mapping[str, Any]) -> Verdict | None:
    """A proposal's stored verdict, or None when it holds none: a proposal that never went
    through the guard (one stored directly, as fixtures and imports do) keeps ``{}``."""
    return Verdict.from_dict(data) if data else None


def _stored_sentence(stored: Mapping[str, Any] | None, english: object) -> Sentence:
    """The stored sentence; a verdict stored before sentences were kept has only its
    English, which then reads as written (and in any language a catalogue gives it)."""
    return Sentence.from_dict(stored) if stored else Sentence(str(english))
