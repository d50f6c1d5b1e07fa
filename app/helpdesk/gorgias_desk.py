"""Gorgias as the helpdesk jobs see it: :class:`~app.helpdesk.jobs.Desk` on the client.

The client (:mod:`integrations.gorgias`) keeps to the account's request budget, honours
``Retry-after`` and never posts one of our ids twice; this adapter turns its tickets into
the facts Caseward keeps, and posts a reply on the ticket's own channel, to its customer
(both from the ticket as already read), from the account's API user, after looking our id
up first (a reply is posted again only when Gorgias does not have it). An internal note is
looked up first only when an earlier run may have posted it: one the job made in its own
run goes at once, a request of the account's 40 each 20 s saved.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from redis import Redis

from app.errors import InvalidInput, ProviderUnavailable
from app.helpdesk.connection import GorgiasAccount
from app.helpdesk.tickets import TicketFacts, TicketMessage
from app.settings import Settings
from app.words import said
from integrations.gorgias import (
    Budgets,
    GorgiasClient,
    GorgiasRefused,
    GorgiasUnavailable,
    SharedBudgets,
    Ticket,
)


class GorgiasDesk:
    def __init__(self, client: GorgiasClient) -> None:
        self._client = client

    def check(self) -> None:
        """Read the account once: its credentials work, or say why not (nothing is saved)."""
        try:
            self._client.account()
        except GorgiasRefused as refused:
            raise InvalidInput(
                said("Gorgias refused these credentials: %(why)s", why=refused.message),
                field="api_key",
            ) from refused
        except GorgiasUnavailable as failed:
            raise ProviderUnavailable(
                said(
                    "Gorgias could not be reached (%(reason)s); nothing was saved",
                    reason=failed.reason,
                )
            ) from failed

    def ticket(self, ticket_id: int) -> TicketFacts:
        return facts_of(self._client.ticket(ticket_id))

    def post_reply(self, ticket: TicketFacts, *, body_text: str, our_id: str) -> int:
        if ticket.customer_email is None:
            raise ValueError(f"Gorgias ticket {ticket.id} has no customer email to reply to")
        posted = self._client.post_reply(
            ticket.id,
            body_text=body_text,
            our_id=our_id,
            sender_email=self._client.username,
            receiver_email=ticket.customer_email,
            channel="chat" if ticket.channel == "chat" else "email",
            already_tried=True,
        )
        return posted.id

    def post_internal_note(
        self, ticket_id: int, *, body_text: str, our_id: str, already_tried: bool
    ) -> int:
        return self._client.post_internal_note(
            ticket_id, body_text=body_text, our_id=our_id, already_tried=already_tried
        ).id


def facts_of(ticket: Ticket) -> TicketFacts:
    return TicketFacts(
        id=ticket.id,
        subject=ticket.subject or "",
        customer_email=ticket.customer.email if ticket.customer else None,
        channel=ticket.channel or "email",
        messages=tuple(
            TicketMessage(
                id=message.id,
                body_text=message.body_text,
                from_agent=message.from_agent,
                public=message.public,
                sender_email=message.sender_email,
                external_id=message.external_id,
            )
            for message in sorted(ticket.messages, key=lambda m: (m.created_datetime, m.id))
        ),
    )


def gorgias_desks(settings: Settings, redis: Redis) -> Callable[[GorgiasAccount], GorgiasDesk]:
    """Desks by account, each kept for the process: one client (and its connections)
    per account and credentials, however many jobs use it. Every client draws on the
    account's budget in ``redis``, which every process of the deployment shares."""
    budgets = SharedBudgets(redis)

    @functools.cache
    def desk(account: GorgiasAccount) -> GorgiasDesk:
        return GorgiasDesk(_client(settings, budgets, account))

    return desk


def check_account(settings: Settings, redis: Redis, account: GorgiasAccount) -> None:
    """Read ``account`` once, as an owner saves it (:meth:`GorgiasDesk.check`), with a client
    closed afterwards: a check is one request, not a desk kept for the process."""
    with _client(settings, SharedBudgets(redis), account) as client:
        GorgiasDesk(client).check()


def _client(settings: Settings, budgets: Budgets, account: GorgiasAccount) -> GorgiasClient:
    return GorgiasClient(
        account.domain,
        account.username,
        account.api_key,
        timeout_s=settings.provider_timeout_seconds,
        api_base=settings.gorgias_api_base or None,
        budgets=budgets,
    )
