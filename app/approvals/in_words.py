"""An action in words: what an approver reads before approving its digest.

The digest (:mod:`app.cases.digest`) binds an approval to a proposal's provider,
kind, target, customer, amount, currency, line items and parameters. This module says
that same content as one sentence, so a person approves what they read:
"Refund $48.00 of order #1001, Stripe payment pi_3N… of customer cus_9…, to the
original payment method."

Nothing is added that the proposal does not hold: where no order on file matches the
refund's target, the sentence says so rather than naming one, and a line the order does not
list is named by its id. The merchant's own endpoint (provider ``merchant``) is named as
"your own endpoint", with its own ids: what it refunds to is its own business, so its
refund says only whose payment it is. The words come from the caller's translations (the admin
passes its message catalogue; the default reads the English as written) and amounts
are formatted for the caller's locale in the currency's ISO 4217 digits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from app.cases.digest import Reviewable
from app.money import DEFAULT_LOCALE, Money
from app.words import AS_WRITTEN, Translations
from integrations.provider import ActionKind


class OrderOnFile(Protocol):
    """The order a refund targets, as the shop's records hold it."""

    @property
    def name(self) -> str: ...

    @property
    def lines(self) -> Sequence[Mapping[str, Any]]: ...


def describe_action(
    item: Reviewable,
    *,
    order: OrderOnFile | None = None,
    locale: str = DEFAULT_LOCALE,
    translations: Translations = AS_WRITTEN,
) -> str:
    """One sentence saying everything the digest of ``item`` covers but its shop and
    policy version (the page states the version beside it). ``order`` is the order on file whose
    payment a refund targets, or None when there is none."""
    words = _Words(translations, locale)
    kind = item.kind
    if kind == ActionKind.REFUND:
        return words.refund(item, order)
    if kind == ActionKind.CUSTOMER_CREDIT:
        return words.credit(item)
    if kind == ActionKind.DISCOUNT:
        return words.discount(item)
    if kind == ActionKind.SUBSCRIPTION_CANCEL:
        return words.cancel(item)
    if kind == ActionKind.SUBSCRIPTION_CHANGE:
        return words.change(item)
    _ = translations.gettext
    return _("%(kind)s of %(amount)s on %(target)s.") % {
        "kind": kind,
        "amount": words.money(item.amount, item.currency),
        "target": words.target(item),
    }


class _Words:
    def __init__(self, translations: Translations, locale: str) -> None:
        self._t = translations
        self._locale = locale

    def money(self, amount: int | None, currency: str | None) -> str:
        if amount is None or not currency:
            return self._t.gettext("an amount not given")
        return Money(amount, currency).format(self._locale)

    def target(self, item: Reviewable) -> str:
        """The provider object the action writes to, named with its provider."""
        _ = self._t.gettext
        customer_kinds = (ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT)
        noun = {
            ("stripe", False): _("Stripe payment %(id)s"),
            ("stripe", True): _("Stripe customer %(id)s"),
            ("shopify", False): _("Shopify order %(id)s"),
            ("shopify", True): _("Shopify customer %(id)s"),
            ("merchant", False): _("payment %(id)s at your own endpoint"),
            ("merchant", True): _("customer %(id)s at your own endpoint"),
        }.get((item.provider, item.kind in customer_kinds), "%(provider)s %(id)s")
        return noun % {"id": item.target, "provider": item.provider}

    def refund(self, item: Reviewable, order: OrderOnFile | None) -> str:
        if item.provider == "merchant":
            return self.merchant_refund(item, order)
        _ = self._t.gettext
        values = {
            "amount": self.money(item.amount, item.currency),
            "target": self.target(item),
            "order": order.name if order is not None else "",
            "customer": item.customer_ref or "",
        }
        if order is not None and item.customer_ref:
            sentence = _(
                "Refund %(amount)s of order %(order)s, %(target)s of customer %(customer)s, "
                "to the original payment method"
            )
        elif order is not None:
            sentence = _(
                "Refund %(amount)s of order %(order)s, %(target)s, to the original payment method"
            )
        elif item.customer_ref:
            sentence = _(
                "Refund %(amount)s of %(target)s of customer %(customer)s (no order on file "
                "matches it), to the original payment method"
            )
        else:
            sentence = _(
                "Refund %(amount)s of %(target)s (no order on file matches it), "
                "to the original payment method"
            )
        clauses = [sentence % values]
        if item.line_items:
            clauses.append(
                _("for %(lines)s") % {"lines": self._lines(item.line_items, order, item.currency)}
            )
        shipping = item.params.get("shipping")
        if isinstance(shipping, int):
            clauses.append(
                _("including %(shipping)s of shipping")
                % {"shipping": self.money(shipping, item.currency)}
            )
        if item.params.get("notify") is True:
            clauses.append(_("and Shopify notifies the customer"))
        return self._sentence(clauses, item)

    def merchant_refund(self, item: Reviewable, order: OrderOnFile | None) -> str:
        """A refund the merchant's endpoint makes: of its payment, to its customer."""
        _ = self._t.gettext
        values = {
            "amount": self.money(item.amount, item.currency),
            "target": self.target(item),
            "customer": item.customer_ref or "",
        }
        if item.customer_ref:
            sentence = _("Refund %(amount)s of %(target)s to its customer %(customer)s")
        else:
            sentence = _(
                "Refund %(amount)s of %(target)s (the case's customer is not linked there)"
            )
        clauses = [sentence % values]
        if order is not None:
            clauses.append(_("which paid order %(order)s") % {"order": order.name})
        if item.line_items:
            clauses.append(
                _("for %(lines)s") % {"lines": self._lines(item.line_items, order, item.currency)}
            )
        return self._sentence(clauses, item)

    def _lines(
        self,
        line_items: Sequence[Mapping[str, Any]],
        order: OrderOnFile | None,
        currency: str | None,
    ) -> str:
        _ = self._t.gettext
        titles = {
            str(line.get("id")): str(line.get("title")) for line in (order.lines if order else [])
        }
        parts = []
        for line in line_items:
            line_id = str(line["line_id"])
            title = titles.get(line_id)
            name = (
                _("“%(title)s”") % {"title": title}
                if title
                else _("line %(id)s (not on the order on file)") % {"id": line_id}
            )
            amount = self.money(int(line["amount"]), currency)
            quantity = line.get("quantity")
            if quantity is None:
                parts.append(_("%(amount)s of %(line)s") % {"amount": amount, "line": name})
            else:
                parts.append(
                    _("%(quantity)s \u00d7 %(line)s (%(amount)s)")
                    % {"quantity": quantity, "line": name, "amount": amount}
                )
        return ", ".join(parts)

    def credit(self, item: Reviewable) -> str:
        _ = self._t.gettext
        sentence = _("Add %(amount)s of credit to the balance of %(target)s") % {
            "amount": self.money(item.amount, item.currency),
            "target": self.target(item),
        }
        clauses = [sentence]
        description = item.params.get("description")
        if isinstance(description, str):
            clauses.append(_("described as “%(text)s”") % {"text": description})
        if item.params.get("notify") is True:
            clauses.append(_("and Shopify notifies the customer"))
        return self._sentence(clauses, item)

    def discount(self, item: Reviewable) -> str:
        _ = self._t.gettext
        values = {"amount": self.money(item.amount, item.currency), "target": self.target(item)}
        percent = item.params.get("percent_off")
        if isinstance(percent, int):
            sentence = _("Give %(target)s %(percent)s%% off, at most %(amount)s") % {
                **values,
                "percent": percent,
            }
        else:
            sentence = _("Give %(target)s %(amount)s off") % values
        clauses = [sentence]
        duration = item.params.get("duration")
        months = item.params.get("duration_in_months")
        if duration == "once":
            clauses.append(_("once"))
        elif duration == "forever":
            clauses.append(_("on every invoice, with no end"))
        elif duration == "repeating" and isinstance(months, int):
            clauses.append(
                self._t.ngettext("for %(num)d month", "for %(num)d months", months)
                % {"num": months}
            )
        return self._sentence(clauses, item)

    def cancel(self, item: Reviewable) -> str:
        _ = self._t.gettext
        target = {"target": self._subscription(item)}
        if item.params.get("at_period_end") is True:
            sentence = _("Cancel %(target)s at the end of its current period") % target
        else:
            sentence = _("Cancel %(target)s now, immediately and for good") % target
        return self._sentence([sentence], item)

    def change(self, item: Reviewable) -> str:
        _ = self._t.gettext
        items = item.params.get("items") or []
        wanted = ", ".join(
            _("%(price)s \u00d7 %(quantity)s") % {"price": price, "quantity": quantity}
            for price, quantity in items
        )
        clauses = [
            _("Change %(target)s to exactly: %(items)s")
            % {"target": self._subscription(item), "items": wanted or _("no items")}
        ]
        proration = {
            "create_prorations": _("prorated"),
            "none": _("without proration"),
            "always_invoice": _("prorated and invoiced at once"),
        }.get(str(item.params.get("proration_behavior")))
        if proration:
            clauses.append(proration)
        if item.params.get("cancel_at_period_end") is True:
            clauses.append(_("and cancel it at the end of its current period"))
        return self._sentence(clauses, item)

    def _subscription(self, item: Reviewable) -> str:
        _ = self._t.gettext
        values = {
            "provider": item.provider.capitalize(),
            "id": item.target,
            "customer": item.customer_ref,
        }
        if item.customer_ref:
            return _("%(provider)s subscription %(id)s of customer %(customer)s") % values
        return _("%(provider)s subscription %(id)s") % values

    def _sentence(self, clauses: list[str], item: Reviewable) -> str:
        """The clauses joined, then the reason the proposal gives, if any."""
        reason = item.params.get("reason")
        text = ", ".join(clauses)
        if isinstance(reason, str) and reason:
            text = self._t.gettext("%(action)s (reason: %(reason)s)") % {
                "action": text,
                "reason": reason,
            }
        return text + "."
