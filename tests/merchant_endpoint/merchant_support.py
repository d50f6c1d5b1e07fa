"""Helpers for the merchant endpoint tests: the receiving server as a process, and a shop
connected to it.

The receiver runs as ``python -m integrations.merchant_endpoint.sandbox`` with its records
in a directory of the test's, steered over HTTP through its control routes, and can be
restarted on the same port with the same records. Staff, worker processes and polling are
the money path's (``tests/money_path``), imported from there.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "money_path"))
from money_path_harness import ServiceProcess, Staff, WorkerProcess, wait_for

from app.actors import Surface, staff
from app.cases.models import Customer
from app.cases.service import open_case
from app.clock import utcnow
from app.connections.merchant import save_merchant_connection
from app.crypto import SecretBox
from app.demo import OWNER, STAFF
from app.shops.models import Shop, StaffMember
from app.shops.service import set_writes_enabled
from integrations.merchant_endpoint.sandbox import CRASH_EXIT_STATUS

__all__ = [
    "CAPTURED",
    "PROVIDER_TIMEOUT",
    "MerchantShop",
    "Receiver",
    "ServiceProcess",
    "Staff",
    "WorkerProcess",
    "seed_merchant_shop",
    "wait_for",
]

CAPTURED = 9600
# The worker waits this long for the receiver: a fault's slow answer waits longer.
PROVIDER_TIMEOUT = 2.0
AS_OWNER = staff(OWNER, Surface.STAFF_API)


class Receiver:
    """The receiving server in its own process, its records in ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.control_token = secrets.token_urlsafe(16)
        self.port = 0
        self.url = ""
        self.process = self._start()

    def _start(self) -> ServiceProcess:
        process = ServiceProcess(
            [
                sys.executable,
                "-m",
                "integrations.merchant_endpoint.sandbox",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.data_dir),
            ],
            {**os.environ, "MERCHANT_RECEIVER_CONTROL_TOKEN": self.control_token},
        )

        def announced() -> str | None:
            if process.process.poll() is not None:
                raise AssertionError("the receiver exited: " + "".join(process.output))
            for line in list(process.output):
                if line.startswith("MERCHANT_RECEIVER_URL="):
                    url: str = line.strip().partition("=")[2]
                    return url
            return None

        self.url = wait_for(announced, what="the receiver to announce its address")
        self.port = int(self.url.rsplit(":", 1)[1])
        return process

    def exited_with(self) -> int | None:
        """The process's exit status once it has exited, else None."""
        status: int | None = self.process.process.poll()
        return status

    def restart(self) -> None:
        """Start it again on the same port with the same records (after a crash, or
        stopping it first as a deployment would)."""
        if self.process.process.poll() is None:
            self.process.process.send_signal(signal.SIGTERM)
            self.process.process.wait(timeout=10)
        self.process = self._start()

    def stop(self) -> None:
        self.process.stop()

    # ------------------------------------------------------------ control

    def control(self, verb: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = httpx.request(
            verb,
            f"{self.url}/_sandbox/{path}",
            json=body,
            headers={"Authorization": f"Bearer {self.control_token}"},
            timeout=10,
        )
        assert response.status_code == 200, response.text
        return response.json()

    def reset(self) -> None:
        self.control("POST", "reset")

    def hold_secrets(self, *held: str) -> None:
        self.control("POST", "secrets", {"secrets": list(held)})

    def seed_customer(self, customer_id: str, **fields: Any) -> None:
        self.control("POST", "customers", {"id": customer_id, **fields})

    def seed_payment(self, payment_id: str, customer: str | None, **fields: Any) -> None:
        body = {"id": payment_id, "amount": CAPTURED, "currency": "usd", "customer": customer}
        self.control("POST", "payments", {**body, **fields})

    def arm(self, kind: str, **fields: Any) -> dict[str, Any]:
        armed: dict[str, Any] = self.control("POST", "faults", {"kind": kind, **fields})
        return armed

    def refuse_next(self, status: int, code: str, **fields: Any) -> None:
        self.control("POST", "refuse_next", {"status": status, "code": code, **fields})

    def exit_after_commit(self) -> None:
        self.control("POST", "exit_after_commit", {"count": 1})

    def crashed(self) -> bool:
        return self.exited_with() == CRASH_EXIT_STATUS

    def effects(self) -> list[dict[str, Any]]:
        """Every refund and credit the receiver made, with the key it made it under."""
        found: list[dict[str, Any]] = self.control("GET", "effects")
        return found

    def received(self) -> list[dict[str, Any]]:
        """Every request it received, with its headers and the key in its body."""
        found: list[dict[str, Any]] = self.control("GET", "received")
        return found

    def holds(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.control("GET", "holds")
        return found


@dataclass(frozen=True)
class MerchantShop:
    shop_id: uuid.UUID
    domain: str
    case_id: uuid.UUID
    customer: str  # the customer's id at the merchant's endpoint
    payment: str  # a $96.00 payment of theirs there
    secret: str  # the signing secret the connection was given


def seed_merchant_shop(
    session: Session,
    *,
    receiver: Receiver,
    box: SecretBox,
    merchant_customer: bool = True,
    identity_level: str = "strong",
) -> MerchantShop:
    """A shop with the demo's staff, writes on, connected to ``receiver`` (which holds its
    secret), and a case (at ``identity_level``) of maya@example.com, a customer with a
    paid $96.00 payment there; without ``merchant_customer`` the case's customer has no
    id at the endpoint (the endpoint's customer has the same email)."""
    now = utcnow()
    tag = uuid.uuid4().hex[:10]
    shop = Shop(domain=f"merchant-{tag}.myshopify.com", name="Linen & Loom", created_at=now)
    session.add(shop)
    session.flush()
    for user_id, role, limit in STAFF:
        session.add(
            StaffMember(
                shop_id=shop.id,
                user_id=user_id,
                email=f"{user_id}@{shop.domain}",
                role=role,
                approval_limits={"usd": limit} if limit else {},
            )
        )
    session.flush()
    connected = save_merchant_connection(
        session, shop=shop, actor=AS_OWNER, url=receiver.url, box=box, production=False, now=now
    )
    assert connected.new_secret is not None
    set_writes_enabled(session, shop=shop, actor=AS_OWNER, enabled=True, now=now)
    customer_id, payment_id = f"cust_{tag}", f"pay_{tag}"
    customer = Customer(
        shop_id=shop.id,
        email="maya@example.com",
        name="Maya Lin",
        merchant_customer_id=customer_id if merchant_customer else None,
    )
    session.add(customer)
    session.flush()
    case = open_case(
        session,
        shop=shop,
        actor=AS_OWNER,
        customer_id=customer.id,
        subject="One apron arrived torn",
        request_text="One of the two aprons arrived torn; may I have a refund for it?",
        identity_level=identity_level,
        now=now,
    )
    session.commit()
    receiver.hold_secrets(connected.new_secret)
    receiver.seed_customer(customer_id, email="maya@example.com", currency="usd")
    receiver.seed_payment(payment_id, customer_id)
    return MerchantShop(
        shop_id=shop.id,
        domain=shop.domain,
        case_id=case.id,
        customer=customer_id,
        payment=payment_id,
        secret=connected.new_secret,
    )
