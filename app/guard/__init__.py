"""The guard: built-in checks on every proposed money action, as pure functions.

``evaluate(proposal, facts, policy=..., switches=..., in_flight=..., history=...,
order=..., spending=..., record=..., now=...)`` returns a :class:`Verdict`. No database, no
HTTP, no clock: everything comes in as arguments, so the same call gives the same answer when
a proposal is made and again in the worker, under the row lock, just before the
provider call. The cost is linear in the provider's records and our actions; a caller
that adds up what counts against the caps itself (``spending``, :class:`CapSpending`)
hands over only the actions on the same target or money. Abuse signals (``record``,
:class:`CustomerRecord`) escalate to a person and never block (:mod:`app.guard._signals`).
"""

from app.guard._common import ALLOWED_PARAMS
from app.guard._context import CUSTOMER_TARGET_KINDS, describe_period, moved_money
from app.guard._signals import SIGNAL_KINDS, SIGNAL_WINDOW
from app.guard.checks import evaluate
from app.guard.identity import IdentityLevel
from app.guard.inputs import GuardInputs
from app.guard.policy import (
    DEFAULT_DUPLICATE_WINDOW,
    DEFAULT_MAX_PERCENT_OFF,
    MONEY_KINDS,
    CapRule,
    PolicyError,
    PolicyRules,
    ShopSwitches,
    SignalRules,
)
from app.guard.proposal import (
    CapSpend,
    CapSpending,
    ClaimCoverage,
    CustomerRecord,
    InFlightAction,
    InFlightStatus,
    LineItemRef,
    PastAction,
    ProposedAction,
)
from app.guard.verdict import CheckName, CheckResult, Outcome, Verdict, stored_verdict
from integrations.provider import ACTION_ID_METADATA_KEY

__all__ = [
    "ACTION_ID_METADATA_KEY",
    "ALLOWED_PARAMS",
    "CUSTOMER_TARGET_KINDS",
    "DEFAULT_DUPLICATE_WINDOW",
    "DEFAULT_MAX_PERCENT_OFF",
    "MONEY_KINDS",
    "SIGNAL_KINDS",
    "SIGNAL_WINDOW",
    "CapRule",
    "CapSpend",
    "CapSpending",
    "CheckName",
    "CheckResult",
    "ClaimCoverage",
    "CustomerRecord",
    "GuardInputs",
    "IdentityLevel",
    "InFlightAction",
    "InFlightStatus",
    "LineItemRef",
    "Outcome",
    "PastAction",
    "PolicyError",
    "PolicyRules",
    "ProposedAction",
    "ShopSwitches",
    "SignalRules",
    "Verdict",
    "describe_period",
    "evaluate",
    "moved_money",
    "stored_verdict",
]
