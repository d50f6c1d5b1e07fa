"""The case bench's doors besides the storefront widget: a Gorgias account per shop, the
embedded admin as the Shopify admin calls it, and an agent on the MCP endpoint.

    from case_surfaces import connect_helpdesk, AdminPerson, McpAgent, Ticket

The sequence, per shop, at seeding (:func:`connect_helpdesk`): a Gorgias account at the
Gorgias sandbox (a process) with its API user and the approver as an agent; the shop's
Gorgias connection kept as the owner saves it; the account's HTTP integration calling the
web app's events address with the connection's secret header, as docs/gorgias.md has the
merchant set it. Then, per case: a :class:`Ticket` opens as the customer writes to the
helpdesk and carries the agents' macros (internal notes) and the sidebar they read;
:class:`AdminPerson` reads a case and approves through the admin's JSON API and its case
page, each request carrying a fresh Shopify session token (HS256 with the app secret, a
minute's life), one form post per approval; :class:`McpAgent` finds, reads and proposes
over ``/mcp`` with the SDK's client, and checks that an approval it slips in is refused.
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import anyio
import jwt
import requests
from bench_money_path import Sandbox
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult
from sqlalchemy.orm import Session

from app.actors import Actor
from app.agents.service import issue_agent_credential
from app.clock import utcnow
from app.crypto import SecretBox
from app.helpdesk.connection import SECRET_HEADER, save_gorgias_connection
from app.helpdesk.events import CALL_TRIGGERS, call_body_template
from app.shops.models import Shop
from app.web.mcp_mount import MCP_PATH

GORGIAS_API_USER, GORGIAS_API_KEY = "api@cases.example", "case-bench-gorgias-key-0123456789"


@dataclass(frozen=True)
class Helpdesk:
    domain: str  # the Gorgias account's domain
    connection_id: uuid.UUID
    secret: str  # the integration's header, which the sidebar wants too


def connect_helpdesk(
    session: Session,
    gorgias: Sandbox,
    *,
    shop: Shop,
    owner: Actor,
    agent_email: str,
    web: str,
    box: SecretBox,
) -> Helpdesk:
    """The shop's Gorgias account, connected and calling ``web`` (the caller commits)."""
    account = gorgias.control(
        "POST",
        "/accounts",
        {
            "name": f"cases-{uuid.uuid4().hex[:8]}",
            "api_users": [{"email": GORGIAS_API_USER, "api_key": GORGIAS_API_KEY}],
        },
    )
    domain = account["domain"]
    gorgias.control("POST", f"/accounts/{domain}/users", {"email": agent_email})
    connected = save_gorgias_connection(
        session,
        shop=shop,
        actor=owner,
        domain=domain,
        username=GORGIAS_API_USER,
        api_key=GORGIAS_API_KEY,
        box=box,
        # The sandbox account was made a moment ago: nothing to read back.
        check=lambda _account: None,
        now=utcnow(),
    )
    session.flush()
    assert connected.new_secret is not None
    connection_id = connected.connection.id
    for trigger in CALL_TRIGGERS:
        gorgias.control(
            "POST",
            f"/accounts/{domain}/integrations",
            {
                "url": f"{web}/helpdesk/gorgias/{connection_id}/events",
                "body_template": call_body_template(trigger),
                "triggers": [trigger],
                "headers": {SECRET_HEADER: connected.new_secret},
            },
        )
    return Helpdesk(domain, connection_id, connected.new_secret)


@dataclass
class Ticket:
    """One customer's ticket in the shop's Gorgias account."""

    gorgias: Sandbox
    helpdesk: Helpdesk
    id: int = 0

    def open(self, email: str, name: str, text: str) -> int:
        opened = self.gorgias.control(
            "POST",
            f"/accounts/{self.helpdesk.domain}/tickets",
            {"customer_email": email, "customer_name": name, "subject": "Order", "body_text": text},
        )
        self.id = int(opened["id"])
        return self.id

    def messages(self) -> list[dict[str, Any]]:
        return list(self.gorgias.control("GET", f"/tickets/{self.id}")["messages"])

    def macro(self, command: str, agent_email: str) -> None:
        """An agent applies a macro: an internal note whose first line is the command."""
        self.gorgias.control(
            "POST",
            f"/tickets/{self.id}/agent_writes",
            {"body_text": f"caseward: {command}", "internal": True, "user_email": agent_email},
        )

    def note(self, starts: tuple[str, ...], after: int, deadline: float) -> str:
        """The first internal note past the ``after`` first messages starting with one of
        ``starts``, waited for."""
        while time.monotonic() < deadline:
            for message in self.messages()[after:]:
                body = message.get("body_text") or ""
                if not message["public"] and body.startswith(starts):
                    return body
            time.sleep(0.1)
        raise RuntimeError(f"no note starting {starts[0]!r} on ticket {self.id}")

    def sidebar(self, web: str) -> dict[str, Any]:
        answer = requests.get(
            f"{web}/helpdesk/gorgias/{self.helpdesk.connection_id}/sidebar",
            params={"ticket_id": self.id},
            headers={SECRET_HEADER: self.helpdesk.secret},
            timeout=30,
        )
        answer.raise_for_status()
        return dict(answer.json())

    def told(self) -> list[dict[str, Any]]:
        """What Caseward posted for the customer: public messages from the API user."""
        return [m for m in self.messages() if m["public"] and m["from_agent"]]


def posted_at(message: dict[str, Any]) -> float:
    """A Gorgias message's time (UTC, written without an offset) as a timestamp."""
    moment = datetime.fromisoformat(message["created_datetime"].removesuffix("Z"))
    return moment.replace(tzinfo=UTC).timestamp()


def our_message_id(message: dict[str, Any]) -> uuid.UUID | None:
    """Caseward's message id from the ``external_id`` it posted with."""
    found = re.fullmatch(r"caseward-message-([0-9a-f-]{36})", message.get("external_id") or "")
    return uuid.UUID(found[1]) if found else None


# ------------------------------------------------------------------ the admin


@dataclass(frozen=True)
class AdminPerson:
    """A member of the shop's staff in the Shopify admin, as Shopify's user ``user_id``."""

    web: str
    shop_domain: str
    user_id: str
    api_key: str
    api_secret: str

    def session_token(self) -> str:
        """A session token as the admin's App Bridge makes one for each request."""
        issued = int(time.time())
        claims = {
            "iss": f"https://{self.shop_domain}/admin",
            "dest": f"https://{self.shop_domain}",
            "aud": self.api_key,
            "sub": self.user_id,
            "exp": issued + 60,
            "nbf": issued,
            "iat": issued,
            "jti": str(uuid.uuid4()),
            "sid": uuid.uuid4().hex,
        }
        return jwt.encode(claims, self.api_secret, algorithm="HS256")

    def _bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.session_token()}"}

    def case(self, case_id: uuid.UUID) -> dict[str, Any]:
        """The case as the admin's scripts read it."""
        answer = requests.get(f"{self.web}/api/cases/{case_id}", headers=self._bearer(), timeout=30)
        answer.raise_for_status()
        return dict(answer.json())

    def approve_forms(self, case_id: uuid.UUID) -> dict[str, str]:
        """The case page as Shopify frames it: each approve form's URL and the digest it
        shows."""
        store = self.shop_domain.removesuffix(".myshopify.com")
        host = base64.urlsafe_b64encode(f"admin.shopify.com/store/{store}".encode()).decode()
        query = {
            "embedded": "1",
            "shop": self.shop_domain,
            "host": host.rstrip("="),
            "id_token": self.session_token(),
        }
        page = requests.get(f"{self.web}/app/cases/{case_id}?{urlencode(query)}", timeout=30)
        page.raise_for_status()
        forms = re.findall(
            r'<form class="approve" data-url="([^"]+)" data-digest="([^"]+)"', page.text
        )
        return dict(forms)

    def approve(self, url: str, digest: str) -> requests.Response:
        """The approve button: the form's post, as the page's script sends it."""
        return requests.post(
            f"{self.web}{url}", json={"digest": digest}, headers=self._bearer(), timeout=30
        )


# ------------------------------------------------------------------ the agent


def agent_credential(session: Session, shop: Shop, owner: Actor) -> str:
    """A refund-proposing agent's secret, issued by the owner (the caller commits)."""
    issued = issue_agent_credential(
        session,
        shop=shop,
        actor=owner,
        name="Support agent",
        allowed_kinds=("refund",),
        ceiling=None,
        now=utcnow(),
    )
    return issued.secret


@dataclass(frozen=True)
class McpAgent:
    """An agent holding ``secret``, on the web app's MCP endpoint."""

    web: str
    secret: str

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
        """The calls in turn, in one session."""

        async def called(session: ClientSession) -> list[CallToolResult]:
            return [await session.call_tool(tool, arguments) for tool, arguments in calls]

        return anyio.run(self._session, called)

    async def _session(self, use: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.secret}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(f"{self.web}{MCP_PATH}", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await use(session)


def answer_of(result: CallToolResult) -> dict[str, Any]:
    if result.is_error or result.structured_content is None:
        words = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"the MCP tool refused: {words[:200]}")
    return dict(result.structured_content)
