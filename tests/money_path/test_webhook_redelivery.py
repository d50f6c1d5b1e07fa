"""A Stripe event kept while Redis was away has its refresh queued when Stripe sends it again.

The webhook keeps the event, commits, then queues the refresh of the actions it names. If
Redis refuses that job, Stripe gets no 200 and sends the event again: the redelivery is a
duplicate (nothing kept twice), and it queues the refresh the first delivery lost, once.
Without it a refund that failed after it had succeeded would stay recorded as succeeded:
the sweep refreshes only pending actions.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any

from fault_support import ACTION_ID_KEY, approve
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Staff, closed_port
from redis import Redis
from rq import Queue
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.connections.models import Connection
from app.crypto import secret_box
from app.demo import LinenShop
from app.execution.models import ProviderEvent
from app.settings import Settings


def _signed(payload: bytes, secret: str) -> dict[str, str]:
    """Headers signing ``payload`` as Stripe does (HMAC-SHA256 of ``t.payload``)."""
    timestamp = int(time.time())
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256)
    return {
        "Stripe-Signature": f"t={timestamp},v1={digest.hexdigest()}",
        "Content-Type": "application/json",
    }


def _event(action_id: str) -> dict[str, Any]:
    return {
        "id": f"evt_{uuid.uuid4().hex}",
        "object": "event",
        "type": "refund.updated",
        "created": int(time.time()),
        "livemode": False,
        "data": {
            "object": {
                "id": f"re_{uuid.uuid4().hex[:24]}",
                "object": "refund",
                "metadata": {ACTION_ID_KEY: action_id},
            }
        },
    }


def test_an_event_whose_refresh_was_lost_is_refreshed_when_stripe_sends_it_again(
    app: Flask,
    client: FlaskClient,
    linen: LinenShop,
    approver: Staff,
    settings: Settings,
    session: Session,
    queue: Queue,
) -> None:
    connection = session.get(Connection, linen.connection_id)
    assert connection is not None and connection.encrypted_webhook_secret is not None
    secret = secret_box(settings).decrypt(connection.encrypted_webhook_secret)
    path = f"/webhooks/stripe/{linen.connection_id}"
    proposal = approver.get(f"/api/cases/{linen.case_id}").get_json()["proposals"][0]
    action_id = approve(approver, proposal)
    event = _event(action_id)
    payload = json.dumps(event).encode()
    refresh = f"refresh-{action_id}-{event['id']}"

    app.extensions["caseward.redis"] = Redis(port=closed_port())
    lost = client.post(path, data=payload, headers=_signed(payload, secret))
    app.extensions["caseward.redis"] = None  # Redis is back: connected again on first use
    again = client.post(path, data=payload, headers=_signed(payload, secret))
    once_more = client.post(path, data=payload, headers=_signed(payload, secret))

    assert lost.status_code >= 500, lost.get_json()
    assert again.status_code == 200 and again.get_json()["duplicate"] is True
    assert once_more.status_code == 200 and once_more.get_json()["duplicate"] is True
    assert queue.job_ids.count(refresh) == 1
    kept = select(func.count()).select_from(ProviderEvent)
    assert session.scalar(kept.where(ProviderEvent.event_id == event["id"])) == 1
