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
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_datetime, format_timedelta
from flask import Flask, request
from flask_babel import Babel, get_locale, get_translations

from app.guard import PolicyRules
from app.money import Money
from app.words import Code, Sentence, Translations
from integrations.provider import ActionKind

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
    if request.blueprint in ("api", "operator"):
        # The admin's pages send their own locale; other callers (and the operator
        # page's browser) read English unless they ask for another language.
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


def in_reader_words(sentence: Sentence) -> str:
    """What Caseward says in the request's language, money and numbers as its locale
    writes them; the English as stored when the reader asked for nothing else."""
    locale = current_locale()
    if locale == DEFAULT_LOCALE:
        return str(sentence)
    return sentence.in_locale(catalogue(), locale)


def reason_text(sentence: Mapping[str, Any] | None, english: str | None) -> str | None:
    """A stored reason in the reader's words: the sentence Caseward said, when it was
    kept, else the stored text as it is (a provider's own words, or older records)."""
    if sentence:
        return in_reader_words(Sentence.from_dict(sentence))
    return english


def moment_text(moment: datetime, locale: str) -> str:
    """A stored time as the locale writes dates and times, in UTC (and saying so)."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return (
        format_datetime(aware, format="medium", tzinfo=UTC, locale=_babel_locale(locale)) + " UTC"
    )


def duration_text(span: timedelta | None, locale: str) -> str:
    """How long something took, as the locale says it roughly ("3 hours"); a dash for
    nothing measured."""
    if span is None:
        return "—"
    return format_timedelta(span, threshold=1.5, locale=_babel_locale(locale))


def day_label(day: date, locale: str) -> str:
    """A day on a chart's axis, short ("6 Dec")."""
    return format_date(day, format="d MMM", locale=_babel_locale(locale))


@cache
def _babel_locale(locale: str) -> Locale:
    # Parsed once per locale: a page of cases formats hundreds of times.
    return Locale.parse(locale)


# ------------------------------------------------------------------ stored codes in words


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


def say(group: str, code: str, translations: Translations | None = None) -> str:
    """A stored code of ``group`` (``"action"``, ``"check"`` ...) in the admin's words
    (``translations``: the request's, when the caller already holds them); a code the
    catalogue does not know yet is shown as stored."""
    return Code(group, code).in_words(translations or get_translations())


def tone(status: str) -> str:
    return TONES.get(status, "neutral")


def page_words() -> dict[str, object]:
    """What a staff page's template says things with, in the request's locale: money and
    times as the locale writes them, stored codes and reasons in the catalogue's words."""
    locale = current_locale()
    translations = catalogue()
    return {
        "locale": locale,
        "money_text": lambda amount, currency: money_text(amount, currency, locale),
        "moment_text": lambda moment: moment_text(moment, locale),
        "reason_text": reason_text,
        "in_reader_words": in_reader_words,
        "say": lambda group, code: say(group, code, translations),
        "tone": tone,
    }


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
    if policy.store_credit_bonus_percent is not None:
        lines.append(
            _(
                "A customer asking for a refund is offered store credit instead, worth "
                "%(percent)s%% more."
            )
            % {"percent": policy.store_credit_bonus_percent}
        )
    if policy.replacement_discount:
        lines.append(
            _(
                "A customer asking for a refund is offered a discount of the same value on a "
                "replacement."
            )
        )
    if policy.handover_owner:
        lines.append(
            _("Cases handed to a person go to %(owner)s.") % {"owner": policy.handover_owner}
        )
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
    lines += _ceiling_sentences(policy, locale)
    lines += _signal_sentences(policy, locale)
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


def _ceiling_sentences(policy: PolicyRules, locale: str) -> list[str]:
    """The most one action of each money kind may move, in each currency it is set in."""
    _ = get_translations().gettext
    per_kind = (
        (ActionKind.REFUND, _("No single refund above %(amount)s.")),
        (ActionKind.CUSTOMER_CREDIT, _("No single customer credit above %(amount)s.")),
        (ActionKind.DISCOUNT, _("No single discount of an amount off above %(amount)s.")),
    )
    return [
        ceiling % {"amount": money_text(amount, currency, locale)}
        for kind, ceiling in per_kind
        for currency, amount in sorted(policy.kind_ceilings.get(kind, {}).items())
    ]


def _signal_sentences(policy: PolicyRules, locale: str) -> list[str]:
    """Each abuse signal the policy turns on, and when those reading the past start."""
    translations = get_translations()
    _ = translations.gettext
    signals = policy.signals
    needed = signals.history_needed
    lines = [
        translations.ngettext(
            "Abuse signals ask a person to decide, never refuse; those reading the shop's past "
            "start once the provider has reported %(num)d of its actions in 90 days.",
            "Abuse signals ask a person to decide, never refuse; those reading the shop's past "
            "start once the provider has reported %(num)d of its actions in 90 days.",
            needed,
        )
        % {"num": needed}
        if needed
        else _("Abuse signals ask a person to decide, never refuse; every one starts at once.")
    ]
    if signals.repeat_claims is not None:
        lines.append(
            translations.ngettext(
                "A person decides for a customer already refunded or credited %(num)d time in "
                "90 days.",
                "A person decides for a customer already refunded or credited %(num)d times in "
                "90 days.",
                signals.repeat_claims,
            )
            % {"num": signals.repeat_claims}
        )
    if signals.repeat_claims_percent is not None:
        lines.append(
            _(
                "A person decides for a customer refunded and credited more than %(percent)s%% "
                "of what they spent, in 90 days."
            )
            % {"percent": signals.repeat_claims_percent}
        )
    if signals.old_delivery_days is not None:
        lines.append(
            translations.ngettext(
                "A person decides on a claim more than %(num)d day after delivery.",
                "A person decides on a claim more than %(num)d days after delivery.",
                signals.old_delivery_days,
            )
            % {"num": signals.old_delivery_days}
        )
    if signals.delivered_but_not_received:
        lines.append(
            _(
                "A person decides when the customer says an order never arrived that the "
                "carrier marked delivered."
            )
        )
    days = signals.new_customer_days
    for currency, amount in sorted(signals.new_customer_amount.items()):
        asked = money_text(amount, currency, locale)
        if days is None:
            sentence = _(
                "A person decides for a customer with one order or none asking for more than "
                "%(amount)s."
            ) % {"amount": asked}
        else:
            sentence = translations.ngettext(
                "A person decides for a new customer (one order, or a first order within "
                "%(num)d day) asking for more than %(amount)s.",
                "A person decides for a new customer (one order, or a first order within "
                "%(num)d days) asking for more than %(amount)s.",
                days,
            ) % {"num": days, "amount": asked}
        lines.append(sentence)
    if signals.shared_email_customers is not None:
        lines.append(
            translations.ngettext(
                "A person decides when %(num)d other customer refunded in 90 days uses the "
                "same email address.",
                "A person decides when %(num)d other customers refunded in 90 days use the "
                "same email address.",
                signals.shared_email_customers,
            )
            % {"num": signals.shared_email_customers}
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
