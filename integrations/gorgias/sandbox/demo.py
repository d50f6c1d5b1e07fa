"""The linen shop's helpdesk of the seed story, as Gorgias would hold it, for the offline demo.

It mirrors the app's demo data: the account ``linen-and-loom.gorgias.com``, whose
support mailbox is also its API user, and one open ticket from Maya Lin
(``maya@example.com``) saying that one apron of order #1001 arrived torn.
"""

from __future__ import annotations

from dataclasses import dataclass

from .sandbox import GorgiasSandbox
from .state import ApiUser

DEMO_ACCOUNT = "linen-and-loom"
DEMO_API_USER = "support@linen-and-loom.example"
# A fixed, public demo key: the offline demo is configured with it.
DEMO_API_KEY = "caseward-demo-gorgias-api-key-for-the-offline-sandbox"
DEMO_SUBJECT = "One apron arrived torn (order #1001)"
DEMO_MESSAGE = (
    "Hi! One of the two linen aprons from order #1001 arrived with a torn seam. "
    "Could I get a refund for that one? The other is lovely."
)


@dataclass(frozen=True)
class DemoAccount:
    domain: str
    api_user: str
    api_key: str
    ticket_id: int


def seed_demo_account(sandbox: GorgiasSandbox) -> DemoAccount:
    """Create the linen shop's helpdesk and Maya's ticket about the torn apron."""
    domain = sandbox.create_account(
        DEMO_ACCOUNT,
        api_users=[ApiUser(DEMO_API_USER, DEMO_API_KEY, "Linen & Loom Support")],
        support_address=DEMO_API_USER,
    )
    ticket_id = sandbox.open_ticket(
        domain,
        customer_email="maya@example.com",
        customer_name="Maya Lin",
        subject=DEMO_SUBJECT,
        body_text=DEMO_MESSAGE,
    )
    return DemoAccount(domain, DEMO_API_USER, DEMO_API_KEY, ticket_id)
