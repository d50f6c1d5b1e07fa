"""Linking a case's customer to their account at the merchant's own endpoint.

Money through the ``merchant`` provider reaches only the case's customer as the endpoint
knows them (``Customer.merchant_customer_id``; the guard denies when it is missing). The
endpoint's ids are its own, so the link is made by the one thing both sides hold, the
customer's email, and only when a proposal for the endpoint is made or edited
(:mod:`app.approvals.service`), never in the worker. The sequence of
:func:`link_merchant_customer`:

1. nothing is asked when the case has no customer, the customer already has an id at
   the endpoint, the case's identity level is below ``medium`` (the email was neither
   verified by a code nor the helpdesk sender's, nor the shopper signed in) or the
   customer has no email;
2. lock the customer's row and ask the endpoint for its customers with that email
   (``customers.find``); an endpoint that fails to answer links nothing;
3. exactly one of them whose email equals the customer's, compared case-insensitively:
   its id is stored on the customer and ``customer.linked`` audited (provider and id,
   never the email) in the caller's transaction; none or several: nothing is stored.

The proposal is then checked as always. When nothing was linked, :func:`explained` adds
to the failed customer check why (no customer, or several, at the endpoint with that
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
from integrations.merchant_endpoint.adapter import CustomerDirectory
from integrations.provider import ProviderError

__all__ = ["Lookup", "LookupOutcome", "explained", "link_merchant_customer"]

log = logging.getLogger(__name__)


class LookupOutcome(StrEnum):
    NOT_ASKED = "not_asked"
    LINKED = "linked"
    NONE_MATCH = "none_match"
    SEVERAL_MATCH = "several_match"
    NO_ANSWER = "no_answer"


@dataclass(frozen=True)
class Lookup:
    """What asking the endpoint for the case's customer came to; ``matches`` is how many
    of its customers had the email (when it answered)."""

    outcome: LookupOutcome
    matches: int = 0

    def why_unlinked(self) -> Sentence | None:
        """Why no customer at the endpoint was linked, when it was asked and none was."""
        if self.outcome is LookupOutcome.NONE_MATCH:
            return said(
                "No customer at your endpoint has the email of the case's customer, so "
                "Caseward could not link one."
            )
        if self.outcome is LookupOutcome.SEVERAL_MATCH:
            return said_n(
                "%(count)s customer at your endpoint has the email of the case's customer, "
                "so Caseward could not tell which one is theirs.",
                "%(count)s customers at your endpoint have the email of the case's "
                "customer, so Caseward could not tell which one is theirs.",
                self.matches,
            )
        if self.outcome is LookupOutcome.NO_ANSWER:
            return said(
                "Your endpoint did not answer the look-up of the customer by email; edit "
                "the proposal to ask again."
            )
        return None


_NOT_ASKED = Lookup(LookupOutcome.NOT_ASKED)


def link_merchant_customer(
    session: Session,
    *,
    case: Case,
    directory: CustomerDirectory,
    actor: Actor,
    now: datetime,
) -> Lookup:
    """Link the case's verified customer to the endpoint's one customer with their email
    (see the module docstring); ``actor`` proposed the action that needed it."""
    if case.customer_id is None or IdentityLevel(case.identity_level) < IdentityLevel.MEDIUM:
        return _NOT_ASKED
    # Locked so that two proposals at once ask once and link once.
    customer = session.scalars(
        select(Customer)
        .where(Customer.id == case.customer_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()
    if customer.merchant_customer_id is not None or not customer.email:
        return _NOT_ASKED
    try:
        answered = directory.customers_with_email(customer.email)
    except ProviderError as exc:
        # The endpoint's words may repeat the email: only the kind of failure is logged.
        log.warning("merchant customer look-up failed for case %s: %s", case.id, type(exc).__name__)
        return Lookup(LookupOutcome.NO_ANSWER)
    wanted = customer.email.casefold()
    matching = sorted({found.id for found in answered if found.email.casefold() == wanted})
    if not matching:
        return Lookup(LookupOutcome.NONE_MATCH)
    if len(matching) > 1:
        return Lookup(LookupOutcome.SEVERAL_MATCH, len(matching))
    customer.merchant_customer_id = matching[0]
    audit.record(
        session,
        shop_id=case.shop_id,
        kind="customer.linked",
        actor=actor,
        case_id=case.id,
        data={
            "customer_id": str(customer.id),
            "provider": MERCHANT,
            "provider_customer_id": matching[0],
        },
        now=now,
    )
    return Lookup(LookupOutcome.LINKED, 1)


def explained(verdict: Verdict, lookup: Lookup) -> Verdict:
    """``verdict`` with its failed customer check saying why no customer was linked, when
    the look-up tells why; else ``verdict`` as it is."""
    why = lookup.why_unlinked()
    if why is None:
        return verdict
    facts = (
        {}
        if lookup.outcome is LookupOutcome.NO_ANSWER
        else {"customers_with_email": lookup.matches}
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
