"""The embedded admin's words, money and dates, in the admin's own locale.

Shopify opens an embedded app with the admin's language in the address (``locale=en``,
``locale=fr-CA``); the admin's links carry it on. It is read only if Babel knows it,
else the admin reads English. All page text goes through one message catalogue
(Flask-Babel, domain ``messages`` under ``app/translations``); English ships, and a
locale without a catalogue of its own reads English with its own money and dates.

The compiled ``messages.mo`` is committed beside its ``messages.po``: Flask-Babel reads
only compiled catalogues, and compiling at install time would be a step every way of
installing (``make install``, CI, a plain ``pip install``) must remember. A test
compiles the ``.po`` again and compares, and another extracts the pages' messages and
finds each in the catalogue, so neither file can drift from the pages.

Money is formatted from integer minor units with the currency's ISO 4217 digits
(:meth:`app.money.Money.format`: no decimals for JPY, three for KWD); times are shown
in UTC, since Caseward does not know the admin's time zone, and say so.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from babel import Locale, UnknownLocaleError
from babel.dates import format_datetime
from flask import Flask, request
from flask_babel import Babel, get_locale, get_translations

from app.guard import PolicyRules
from app.money import Money
from app.words import Translations

DEFAULT_LOCALE = "en"
# Shopify's locales are BCP 47 tags such as ``fr-CA``; anything longer or odder is not one.
_LOCALE_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}")

babel = Babel()


def init_app(app: Flask) -> None:
    """Install the catalogue and the locale of each admin request on ``app``."""
    babel.init_app(app, default_locale=DEFAULT_LOCALE, locale_selector=_request_locale)


def _request_locale() -> str:
    if request.blueprint == "shopify_admin":
        return admin_locale(request.args.get("locale"))
    if request.blueprint == "api":
        # The admin's pages send their own locale; other callers read English unless
        # they ask for another language.
        wanted = request.accept_languages.best
        return admin_locale(wanted) if wanted and wanted != "*" else DEFAULT_LOCALE
    return DEFAULT_LOCALE


def admin_locale(requested: str | None) -> str:
    """``requested`` as a Babel locale identifier (``fr-CA`` → ``fr_CA``) when Babel knows
    it, else English."""
    if not requested or not _LOCALE_TAG.fullmatch(requested):
        return DEFAULT_LOCALE
    try:
        return str(Locale.parse(requested.replace("-", "_")))
    except (UnknownLocaleError, ValueError):
        return DEFAULT_LOCALE


def current_locale() -> str:
    return str(get_locale() or DEFAULT_LOCALE)


def catalogue() -> Translations:
    """The current request's translations, for domain functions that take them."""
    translations: Translations = get_translations()
    return translations


def money_text(amount: int | None, currency: str | None, locale: str) -> str:
    """``amount`` minor units of ``currency`` as the locale writes money; a missing amount
    says so."""
    if amount is None or not currency:
        return str(get_translations().gettext("no amount"))
    return Money(amount, currency).format(locale)


def moment_text(moment: datetime, locale: str) -> str:
    """A stored time as the locale writes dates and times, in UTC (and saying so)."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return format_datetime(aware, format="medium", tzinfo=UTC, locale=locale) + " UTC"


# ------------------------------------------------------------------ stored codes in words


def N_(message: str) -> str:
    """Marks ``message`` for the catalogue; it is translated where it is shown."""
    return message


# Each stored code a page shows, by what it is a code of: the same word can mean two
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
    "kind": {
        "refund": N_("refund"),
        "customer_credit": N_("customer credit"),
        "discount": N_("discount"),
        "subscription_cancel": N_("subscription cancellation"),
        "subscription_change": N_("subscription change"),
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
        "connection.saved": N_("Connection saved"),
        "staff.added": N_("Staff member added"),
        "staff.changed": N_("Staff member changed"),
        "staff.removed": N_("Staff member removed"),
        "request.refused": N_("Request refused"),
    },
}

# Polaris badge tones by status: what needs a person is critical, what waits is a warning.
TONES: dict[str, str] = {
    "succeeded": "success",
    "resolved": "success",
    "approved": "success",
    "failed": "critical",
    "rejected": "critical",
    "blocked": "critical",
    "halted": "critical",
    "cannot_run": "critical",
    "canceled": "critical",
    "needs_attention": "critical",
    "needs_decision": "critical",
    "unknown": "warning",
    "awaiting_approval": "warning",
    "requires_action": "warning",
    "pending": "info",
    "queued": "info",
    "submitting": "info",
    "executing": "info",
}


def say(group: str, code: str) -> str:
    """A stored code of ``group`` (``"action"``, ``"check"`` ...) in the admin's words;
    a code the catalogue does not know yet is shown as stored."""
    message = WORDS[group].get(code)
    return str(get_translations().gettext(message)) if message else code


def tone(status: str) -> str:
    return TONES.get(status, "neutral")


# ------------------------------------------------------------------ the policy in words


def policy_sentences(policy: PolicyRules, locale: str) -> list[str]:
    """One sentence per rule of ``policy``, amounts as ``locale`` writes them."""
    translations = get_translations()
    _ = translations.gettext
    kinds = ", ".join(say("kind", kind) for kind in sorted(policy.enabled_kinds))
    lines = [
        _("Allowed actions: %(kinds)s.") % {"kinds": kinds or _("none")},
        _(
            "A second refund, credit or discount for the same payment or customer within "
            "%(period)s is blocked as a likely duplicate."
        )
        % {"period": _period(policy.duplicate_window)},
        _("Discounts may take at most %(percent)s%% off.") % {"percent": policy.max_percent_off},
    ]
    if policy.auto_approve_ceiling:
        ceilings = ", ".join(
            money_text(amount, currency, locale)
            for currency, amount in sorted(policy.auto_approve_ceiling.items())
        )
        lines.append(
            _("The policy itself approves actions up to %(amounts)s.") % {"amounts": ceilings}
        )
    else:
        lines.append(
            _("Every action needs a person's approval; the policy approves nothing itself.")
        )
    for currency, amount in sorted(policy.two_person_threshold.items()):
        lines.append(
            _("From %(amount)s, two people other than the proposer approve.")
            % {"amount": money_text(amount, currency, locale)}
        )
    if policy.refund_window_days is not None:
        days = policy.refund_window_days
        lines.append(
            translations.ngettext(
                "Refunds only within %(num)d day of delivery or fulfilment.",
                "Refunds only within %(num)d days of delivery or fulfilment.",
                days,
            )
            % {"num": days}
        )
    caps = (
        (policy.per_customer_cap, _("At most %(amount)s per customer in any %(period)s.")),
        (policy.per_shop_cap, _("At most %(amount)s for the whole shop in any %(period)s.")),
    )
    for cap, sentence in caps:
        if cap is not None:
            lines.append(
                sentence
                % {
                    "amount": money_text(cap.limit.amount, cap.limit.currency, locale),
                    "period": _period(cap.period),
                }
            )
    if policy.allowed_reasons is not None:
        lines.append(
            _("Only these reasons are accepted: %(reasons)s.")
            % {"reasons": ", ".join(sorted(policy.allowed_reasons)) or _("none")}
        )
    for kind, level in sorted(policy.min_identity.items()):
        lines.append(
            _("A %(kind)s needs a customer identified at least as %(level)s.")
            % {"kind": say("kind", kind), "level": say("identity", level)}
        )
    return lines


def _period(span: timedelta) -> str:
    """A whole number of days, else hours, else seconds: policies are set in those."""
    translations = get_translations()
    seconds = int(span.total_seconds())
    if seconds % 86400 == 0:
        days = seconds // 86400
        return str(translations.ngettext("%(num)d day", "%(num)d days", days) % {"num": days})
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return str(translations.ngettext("%(num)d hour", "%(num)d hours", hours) % {"num": hours})
    return str(
        translations.ngettext("%(num)d second", "%(num)d seconds", seconds) % {"num": seconds}
    )
