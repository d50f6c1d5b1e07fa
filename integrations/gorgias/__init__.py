"""Gorgias, the shop's helpdesk: its REST API client, and a sandbox of it.

Caseward reads a ticket when Gorgias' HTTP integration says something happened, and
posts back a reply to the customer or an internal note for the shop's agents, each
exactly once (the message's ``external_id`` is ours). The client is
:class:`GorgiasClient`; the sandbox (``integrations.gorgias.sandbox``) serves the same
API locally, with Gorgias' rate limit and its HTTP integrations.
"""

from .budget import PROCESS_BUDGETS, AccountBudgets, Budgets, Limit, SharedBudgets, TokenBucket
from .client import GorgiasClient, account_domain
from .documents import AccountInfo, Customer, PostedMessage, Ticket, TicketMessage
from .errors import GorgiasError, GorgiasRefused, GorgiasUnavailable

__all__ = [
    "PROCESS_BUDGETS",
    "AccountBudgets",
    "AccountInfo",
    "Budgets",
    "Customer",
    "GorgiasClient",
    "GorgiasError",
    "GorgiasRefused",
    "GorgiasUnavailable",
    "Limit",
    "PostedMessage",
    "SharedBudgets",
    "Ticket",
    "TicketMessage",
    "TokenBucket",
    "account_domain",
]
