"""What the domain says to people, kept as a catalogue message and its values.

A check, a refusal or a stop says ``said("Refund of %(amount)s exceeds what is left.",
amount=Money(4800, "usd"))``. The :class:`Sentence` keeps the message (a msgid of the
one catalogue: Babel extracts every ``said`` and ``said_n`` call, see
``app/translations/babel.cfg``) and its values, so each reader gets it in their own
language: ``str(sentence)`` is the English that records, logs and the JSON API carry,
and :meth:`Sentence.in_locale` is what a page shows, with the page's catalogue and
money and numbers in the page's locale.

Values are text, whole numbers, :class:`~app.money.Money` (formatted with the
currency's ISO 4217 digits), stored codes in words (:class:`Code`: ``Code("kind",
"refund")`` reads "refund", from :data:`WORDS`, the one table of what each stored code
is called) or other sentences (a period such as "3 days"). They
survive JSON (:meth:`Sentence.to_dict`, :meth:`Sentence.from_dict`), so a verdict stored
today is shown tomorrow in whatever language its reader has.

Values that name things (payment ids, order names, a provider's own error text) are
passed as they are: only Caseward's own words are translated. The adapters under
``integrations/`` speak for their provider and know nothing of the catalogue, so what they
say of a refusal (Stripe's message, or a Shopify order with no settled payment) is shown
as the provider's words, inside a sentence of Caseward's ("the provider refused the
action: ...").
"""

from __future__ import annotations

import gettext as stdlib_gettext
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, Union

from babel.numbers import format_decimal

from app.money import DEFAULT_LOCALE, Money


class Translations(Protocol):
    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...


# The English as written: what ``str(sentence)`` and the records use.
AS_WRITTEN: Translations = stdlib_gettext.NullTranslations()

Value = Union[str, int, Money, "Code", "Sentence"]


@dataclass(frozen=True)
class Sentence:
    """A catalogue message with ``%(name)s`` placeholders and the values that fill them.

    With ``plural``, the message is the singular and ``count`` (also the value ``count``)
    picks the form, as ``ngettext`` does.
    """

    message: str
    values: Mapping[str, Value] = field(default_factory=dict, hash=False)
    plural: str | None = None
    count: int | None = None

    def __post_init__(self) -> None:
        values = dict(self.values)
        if self.plural is not None:
            if self.count is None:
                raise ValueError("a plural sentence needs its count")
            values["count"] = self.count
        object.__setattr__(self, "values", MappingProxyType(values))

    def __str__(self) -> str:
        return self.in_locale(AS_WRITTEN, DEFAULT_LOCALE)

    def in_locale(self, translations: Translations, locale: str) -> str:
        """The sentence in ``translations``' words, its values as ``locale`` writes them."""
        if self.plural is not None and self.count is not None:
            template = translations.ngettext(self.message, self.plural, self.count)
        else:
            template = translations.gettext(self.message)
        values = {name: _shown(value, translations, locale) for name, value in self.values.items()}
        return template % values if values else template

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message": self.message,
            "values": {name: _stored(value) for name, value in self.values.items()},
        }
        if self.plural is not None:
            data["plural"], data["count"] = self.plural, self.count
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sentence:
        plural = data.get("plural")
        values = {
            name: _restored(value)
            for name, value in dict(data.get("values", {})).items()
            if not (plural is not None and name == "count")
        }
        count = data.get("count")
        return cls(
            message=str(data["message"]),
            values=values,
            plural=str(plural) if plural is not None else None,
            count=int(count) if count is not None else None,
        )


def N_(message: str) -> str:
    """Marks ``message`` for the catalogue; it is translated where it is shown."""
    return message


# Each stored code shown to people, by what it is a code of: the same word can mean two
# things (a proposal a person rejected, an action the provider rejected).
WORDS: dict[str, dict[str, str]] = {
    "role": {
        "viewer": N_("viewer"),
        "proposer": N_("proposer"),
        "approver": N_("approver"),
        "owner": N_("owner"),
    },
    "case": {
        "open": N_("open"),
        "awaiting_approval": N_("awaiting approval"),
        "executing": N_("executing"),
        "resolved": N_("resolved"),
        "needs_attention": N_("needs attention"),
    },
    "proposal": {
        "blocked": N_("blocked"),
        "awaiting_approval": N_("awaiting approval"),
        "approved": N_("approved"),
        "rejected": N_("rejected by a person"),
    },
    "action": {
        "queued": N_("queued"),
        "submitting": N_("being sent"),
        "unknown": N_("outcome unknown"),
        "halted": N_("halted, not sent"),
        "rejected": N_("refused by the provider"),
        "expired": N_("approval expired, not sent"),
        "cannot_run": N_("cannot run, not sent"),
        "needs_decision": N_("needs a person's decision"),
        "pending": N_("pending at the provider"),
        "requires_action": N_("the customer must act"),
        "succeeded": N_("succeeded"),
        "failed": N_("failed"),
        "canceled": N_("canceled"),
    },
    "identity": {
        "none": N_("not identified"),
        "claim": N_("a claim only"),
        "medium": N_("medium"),
        "strong": N_("strong"),
    },
    "identity_method": {
        "logged_in": N_("a logged-in storefront customer"),
        "email_code": N_("a one-time code sent to the order's email"),
        "helpdesk_email": N_("the helpdesk sender's email matching the order's email"),
        "staff": N_("a member of staff"),
    },
    "channel": {
        "storefront": N_("Storefront chat"),
        "helpdesk": N_("Helpdesk ticket"),
        "admin": N_("Opened in the admin"),
    },
    "author": {
        "customer": N_("Customer"),
        "staff": N_("Staff"),
        "caseward": N_("Caseward"),
        "agent": N_("Agent"),
    },
    "kind": {
        "refund": N_("refund"),
        "customer_credit": N_("customer credit"),
        "discount": N_("discount"),
        "subscription_cancel": N_("subscription cancellation"),
        "subscription_change": N_("subscription change"),
    },
    "surface": {
        "shopify_admin": N_("the Shopify admin"),
        "staff_api": N_("the staff API"),
        "operator_page": N_("the operator page"),
        "console": N_("the server's command line"),
        "worker": N_("a background job"),
        "sweeper": N_("the sweep"),
        "provider": N_("the provider"),
        "storefront": N_("the storefront chat"),
        "helpdesk": N_("the helpdesk"),
        "mcp": N_("an agent's MCP connection"),
    },
    # What tripped a shop's brake (app.execution.brakes.BrakeRule).
    "brake": {
        "money_per_hour": N_("money sent per hour"),
        "money_per_day": N_("money sent per day"),
        "actions_per_hour": N_("actions sent per hour"),
        "actions_per_day": N_("actions sent per day"),
        "failures_in_a_row": N_("failed or unclear sends in a row"),
        "error_rate": N_("the share of failed or unclear sends"),
    },
    # What an owner is alerted of (app.alerts.models.AlertKind).
    "alert": {
        "brake_tripped": N_("A brake tripped and sending paused"),
        "unclear_too_long": N_("An outcome is still unclear past its attention time"),
        "refund_failed_after_told": N_("A refund failed after the customer was told"),
    },
    "filter": {
        "needs_approval": N_("Needs approval"),
        "unknown_outcome": N_("Unknown outcome"),
        "failed": N_("Failed"),
        "waiting_on_customer": N_("Waiting on customer"),
    },
    "outcome": {
        "blocked": N_("blocked"),
        "needs_approval": N_("needs approval"),
        "allowed_by_policy": N_("allowed by the shop's policy"),
    },
    # What a candidate policy would have changed of a past action (app.whatif.Change).
    "what_if": {
        "would_block": N_("Would block"),
        "would_escalate": N_("Would need more people"),
        "would_auto_approve": N_("Would approve by itself"),
        "unchanged": N_("Unchanged"),
    },
    # A call to the provider: what it was for, and what came of it.
    "attempt": {
        "submit": N_("sent"),
        "resubmit": N_("sent again"),
        "find": N_("looked up"),
    },
    "answer": {
        "answered": N_("the provider answered"),
        "rejected": N_("the provider refused it"),
        "unknown": N_("no answer came back"),
        "throttled": N_("the provider asked to wait; not sent"),
        "not_sent": N_("not sent"),
        "interrupted": N_("interrupted before an answer"),
        "found": N_("found at the provider"),
        "absent": N_("not at the provider"),
    },
    "check": {
        "writes_enabled": N_("Writes are on"),
        "kill_switch": N_("Kill switch is off"),
        "kind_enabled": N_("The policy allows this kind of action"),
        "identity": N_("Customer identified well enough"),
        "reason_allowed": N_("Reason allowed"),
        "proposal_shape": N_("Proposal complete"),
        "amount": N_("Amount"),
        "target_exists": N_("Target exists at the provider"),
        "customer_matches": N_("Belongs to the case's customer"),
        "order_matches": N_("Matches the order"),
        "currency_matches": N_("Currency matches"),
        "not_already_at_provider": N_("Not already done at the provider"),
        "not_duplicate": N_("Not a duplicate"),
        "within_claim": N_("Within the customer's own claim"),
        "captured": N_("Payment captured"),
        "not_disputed": N_("Payment not disputed"),
        "refundable_remaining": N_("Enough left to refund"),
        "line_items": N_("Line items"),
        "refund_window": N_("Within the refund window"),
        "discount_terms": N_("Discount terms"),
        "not_canceled": N_("Subscription not canceled"),
        "cancel_timing": N_("Cancellation timing"),
        "subscription_active": N_("Subscription active"),
        "change_terms": N_("Change terms"),
        "change_differs": N_("Change differs from now"),
        "customer_cap": N_("Within the per-customer cap"),
        "shop_cap": N_("Within the shop's cap"),
        "within_kind_ceiling": N_("Within the ceiling for one action of its kind"),
        # abuse signals
        "repeat_claims": N_("Repeat claims"),
        "old_delivery": N_("Claim long after delivery"),
        "delivered_but_not_received": N_("Delivered, but said not received"),
        "new_customer_high_value": N_("New customer, high value"),
        "shared_email": N_("Email shared by other customers"),
    },
    "event": {
        "case.opened": N_("Case opened"),
        "case.status_changed": N_("Case status changed"),
        "case.needs_attention": N_("Case needs attention"),
        "proposal.created": N_("Action proposed and checked"),
        "proposal.revised": N_("Proposal edited and checked again"),
        "proposal.approved": N_("Approved"),
        "proposal.rejected": N_("Rejected"),
        "proposal.reopened": N_("Back for approval"),
        "proposal.status_changed": N_("Proposal status changed"),
        "action.queued": N_("Action queued"),
        "action.submit": N_("Sent to the provider"),
        "action.resubmit": N_("Sent again with the same key"),
        "action.find": N_("Looked up at the provider"),
        "action.requeued": N_("Queued again, same key"),
        "action.unknown": N_("Outcome unknown"),
        "action.provider_status": N_("Provider reported a status"),
        "action.halted": N_("Halted, not sent"),
        "action.rejected": N_("Refused by the provider"),
        "action.cannot_run": N_("Cannot run, not sent"),
        "action.needs_decision": N_("Needs a person's decision"),
        "action.expired": N_("Approval expired, not sent"),
        "action.stale_report_ignored": N_("Older provider report ignored"),
        "policy.changed": N_("Policy changed"),
        "shop.writes_enabled": N_("Writes turned on"),
        "shop.writes_disabled": N_("Writes turned off (protection mode)"),
        "shop.kill_switch_engaged": N_("Kill switch engaged"),
        "shop.kill_switch_released": N_("Kill switch released"),
        "shop.brake_tripped": N_("Brake tripped: sending paused"),
        "shop.brake_resumed": N_("Sending resumed after a brake"),
        "shop.brakes_changed": N_("Brakes changed"),
        "shop.alerts_changed": N_("Alert settings changed"),
        "alert.raised": N_("Owner alerted"),
        "alert.delivered": N_("Alert delivered"),
        "connection.saved": N_("Connection saved"),
        "staff.added": N_("Staff member added"),
        "staff.changed": N_("Staff member changed"),
        "staff.removed": N_("Staff member removed"),
        "request.refused": N_("Request refused"),
        "conversation.started": N_("Conversation started"),
        "conversation.message_received": N_("Customer wrote"),
        "conversation.reply_added": N_("Reply to the customer"),
        "conversation.identity_established": N_("Customer identified"),
        "conversation.code_requested": N_("One-time code asked for"),
        "case.drafted": N_("Case drafted"),
        "case.instruction_attempt_flagged": N_(
            "Flagged: a customer message tried to instruct the assistant"
        ),
        "conversation.choice_made": N_("Customer chose"),
        "conversation.reply_delivered": N_("Reply posted to the helpdesk"),
        "case.reply_drafted": N_("Reply drafted by an agent, for a person to send"),
        "agent.credential_issued": N_("Agent credential issued"),
        "agent.credential_revoked": N_("Agent credential revoked"),
        "agent.tool_called": N_("Agent called a tool"),
        "connection.prepare_on_arrival_off": N_("Helpdesk cases prepared only on request"),
        "connection.prepare_on_arrival_on": N_("Helpdesk cases prepared as messages arrive"),
        "connection.secret_rotated": N_("Secret rotated"),
        "connection.webhook_registered": N_("Webhook endpoint registered"),
        "customer.data_exported": N_("Customer's data exported"),
        "customer.erased": N_("Customer's data erased"),
        "customer.linked": N_("Customer linked to their account at the provider"),
        "customer.orders_refreshed": N_("Customer's orders read from the store"),
        "demo.seeded": N_("Demo shop seeded"),
        "helpdesk.call_received": N_("Helpdesk call received"),
        "shop.installed": N_("App installed"),
        "shop.reinstalled": N_("App installed again"),
        "shop.currency_learned": N_("Store's currency read from Shopify"),
        "shop.scopes_changed": N_("App's access changed"),
        "shop.uninstalled": N_("App uninstalled"),
        "staff.joined": N_("Staff member joined"),
        "staff.named": N_("Staff member named by Shopify"),
        "staff.token_issued": N_("Staff token issued"),
        "staff.token_revoked": N_("Staff token revoked"),
        "webhook.stale_ignored": N_("Older webhook ignored"),
        "history.scan_started": N_("History check started"),
        "history.scan_finished": N_("History check finished"),
        "history.scan_failed": N_("History check failed"),
    },
}


@dataclass(frozen=True)
class Code:
    """A stored code (an action's kind, a status) shown in words: ``WORDS[group]``."""

    group: str
    code: str

    def in_words(self, translations: Translations) -> str:
        """The code's word in ``translations``; a code the catalogue does not know yet is
        shown as stored."""
        message = WORDS[self.group].get(self.code)
        return translations.gettext(message) if message else self.code


def said(message: str, **values: Value) -> Sentence:
    """A sentence for people; ``message`` must be a literal, so Babel can extract it."""
    return Sentence(message, values)


def said_n(singular: str, plural: str, count: int, **values: Value) -> Sentence:
    """A sentence whose form depends on ``count`` (the value ``count`` in its message)."""
    return Sentence(singular, values, plural=plural, count=count)


# Sentences said together: each link is a catalogue message, so a language may join
# them its own way.


def joined(parts: Sequence[Sentence]) -> Sentence:
    """Several sentences as one list ("a; b; c"), each still in the reader's words."""
    return _linked(
        parts, lambda first, then: said("%(earlier)s; %(later)s", earlier=first, later=then)
    )


def one_after_another(parts: Sequence[Sentence]) -> Sentence:
    """Several sentences (a check's problems) said one after the other ("a b")."""
    return _linked(parts, lambda first, then: said("%(first)s %(then)s", first=first, then=then))


def joined_by_and(parts: Sequence[Sentence]) -> Sentence:
    """Parts said as "this and that"."""
    return _linked(
        parts, lambda first, then: said("%(first)s and %(then)s", first=first, then=then)
    )


def _linked(parts: Sequence[Sentence], link: Callable[[Sentence, Sentence], Sentence]) -> Sentence:
    if not parts:
        raise ValueError("nothing to join")
    whole = parts[0]
    for part in parts[1:]:
        whole = link(whole, part)
    return whole


def _shown(value: Value, translations: Translations, locale: str) -> str:
    if isinstance(value, Sentence):
        return value.in_locale(translations, locale)
    if isinstance(value, Code):
        return value.in_words(translations)
    if isinstance(value, Money):
        return value.format(locale)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return format_decimal(value, locale=locale)
    return value


def _stored(value: Value) -> Any:
    if isinstance(value, Sentence):
        return {"sentence": value.to_dict()}
    if isinstance(value, Code):
        return {"code": {"group": value.group, "code": value.code}}
    if isinstance(value, Money):
        return {"money": {"amount": value.amount, "currency": value.currency}}
    return value


def _restored(value: Any) -> Value:
    if isinstance(value, Mapping):
        if "sentence" in value:
            return Sentence.from_dict(value["sentence"])
        if "code" in value:
            return Code(str(value["code"]["group"]), str(value["code"]["code"]))
        if "money" in value:
            return Money(int(value["money"]["amount"]), str(value["money"]["currency"]))
        raise ValueError(f"not a stored sentence value: {value!r}")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"not a stored sentence value: {value!r}")
    return value
