"""Linking a case's customer to their own account at a provider: Stripe, or the
merchant's own endpoint.

Money reaches only the case's customer as the provider knows them
(``Customer.identity_at``: ``stripe_customer_id``, ``merchant_customer_id``; the guard
denies when it is missing). The provider's ids are its own, so the link is made by the one
thing both sides hold, the customer's email, and only when a proposal for that provider is
made or edited (:mod:`app.approvals.service`), or drafted to name the customer's account
(store credit, a discount: :mod:`app.drafting.service`), never in the worker. The sequence of
:func:`link_customer`:

1. nothing is asked when the case has no customer, the customer already has an id at
   the provider or has no email, or the case's identity level is below ``medium`` (the
   email was neither verified by a code nor the helpdesk sender's, nor the shopper
   signed in: the refusal then says to verify them);
2. lock the customer's row and ask the provider for its customers with that email
   (the endpoint's ``customers.find``; Stripe's customer list filtered by the email as
   written and in lower case, since Stripe's filter matches case and all); a provider
   that fails to answer links nothing;
3. exactly one of them whose email equals the customer's, compared case-insensitively:
   its id is stored on the customer and ``customer.linked`` audited (provider and id,
   never the email) in the caller's transaction; none or several: nothing is stored.

The proposal is then checked as always. When nothing was linked, :func:`explained` adds
to the failed customer check why (no customer, or several, at the provider with that
email; or no answer), so the person reading the refusal knows what to fix.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, Customer
from app.guard import CheckName, CheckResult, IdentityLevel, Verdict
from app.words import Sentence, one_after_another, said, said_n
from integrations.merchant_endpoint.adapter import NAME as MERCHANT
from integrations.provider import CustomerDirectory, ProviderError

__all__ = ["Lookup", "LookupOutcome", "explained", "link_customer"]

log = logging.getLogger(__name__)


class LookupOutcome(StrEnum):
    NOT_ASKED = "not_asked"
    NOT_VERIFIED = "not_verified"
    LINKED = "linked"
    NONE_MATCH = "none_match"
    SEVERAL_MATCH = "several_match"
    NO_ANSWER = "no_answer"


@dataclass(frozen=True)
class Lookup:
    """What asking ``provider`` for the case's customer came to; ``matches`` is how many
    of its customers had the email (when it answered)."""

    outcome: LookupOutcome
    provider: str
    matches: int = 0

    def why_unlinked(self) -> Sentence | None:
        """Why no customer at the provider was linked, when it was asked and none was."""
        merchant = self.provider == MERCHANT
        place = said("your endpoint") if merchant else self.provider.capitalize()
        if self.outcome is LookupOutcome.NOT_VERIFIED:
            return said(
                "Caseward links the customer's account by their email once the case's "
                "customer is verified (a code sent to their email, or the shopper signed "
                "in); verify them, then edit the proposal."
            )
        if self.outcome is LookupOutcome.NONE_MATCH:
            return said(
                "No customer at %(place)s has the email of the case's customer, so "
                "Caseward could not link one.",
                place=place,
            )
        if self.outcome is LookupOutcome.SEVERAL_MATCH:
            return said_n(
                "%(count)s customer at %(place)s has the email of the case's customer, "
                "so Caseward could not tell which one is theirs.",
                "%(count)s customers at %(place)s have the email of the case's "
                "customer, so Caseward could not tell which one is theirs.",
                self.matches,
                place=place,
            )
        if self.outcome is LookupOutcome.NO_ANSWER:
            return said(
                "%(place)s did not answer the look-up of the customer by email; edit the "
                "proposal to ask again.",
                place=said("Your endpoint") if merchant else self.provider.capitalize(),
            )
        return None


def link_customer(
    session: Session,
    *,
    case: Case,
    provider: str,
    directory: CustomerDirectory,
    actor: Actor,
    now: datetime,
) -> Lookup:
    """Link the case's verified customer to ``provider``'s one customer with their email
    (see the module docstring); ``actor`` proposed the action that needed it."""
    not_asked = Lookup(LookupOutcome.NOT_ASKED, provider)
    if case.customer_id is None:
        return not_asked
    # Locked so that two proposals at once ask once and link once.
    customer = session.scalars(
        select(Customer)
        .where(Customer.id == case.customer_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()
    if customer.identity_at(provider) is not None or not customer.email:
        return not_asked
    if IdentityLevel(case.identity_level) < IdentityLevel.MEDIUM:
        return Lookup(LookupOutcome.NOT_VERIFIED, provider)
    try:
        answered = directory.customers_with_email(customer.email)
    except ProviderError as exc:
        # The provider's words may repeat the email: only the kind of failure is logged.
        log.warning(
            "%s customer look-up failed for case %s: %s", provider, case.id, type(exc).__name__
        )
        return Lookup(LookupOutcome.NO_ANSWER, provider)
    wanted = customer.email.casefold()
    matching = sorted({found.id for found in answered if found.email.casefold() == wanted})
    if len(matching) != 1:
        outcome = LookupOutcome.SEVERAL_MATCH if matching else LookupOutcome.NONE_MATCH
        return Lookup(outcome, provider, len(matching))
    customer.link_at(provider, matching[0])
    audit.record(
        session,
        shop_id=case.shop_id,
        kind="customer.linked",
        actor=actor,
        case_id=case.id,
        data={
            "customer_id": str(customer.id),
            "provider": provider,
            "provider_customer_id": matching[0],
        },
        now=now,
    )
    return Lookup(LookupOutcome.LINKED, provider, 1)


def explained(verdict: Verdict, lookup: Lookup) -> Verdict:
    """``verdict`` with its failed customer check saying why no customer was linked, when
    the look-up tells why; else ``verdict`` as it is."""
    why = lookup.why_unlinked()
    if why is None:
        return verdict
    facts = (
        {"customers_with_email": lookup.matches}
        if lookup.outcome in (LookupOutcome.NONE_MATCH, LookupOutcome.SEVERAL_MATCH)
        else {}
    )
    checks = tuple(
        CheckResult(
            check.name,
            check.passed,
            one_after_another([check.said, why]),
            {**check.facts, **facts},
        )
        if check.name == CheckName.CUSTOMER_MATCHES and not check.passed
        else check
        for check in verdict.checks
    )
    return replace(verdict, checks=checks)
