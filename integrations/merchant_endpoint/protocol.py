"""The wire protocol between Caseward and a merchant's own endpoint (version 1).

Caseward makes four kinds of request, each a signed POST (:mod:`.signing`) of a JSON
object to a path under the endpoint's base URL; the ``type`` field repeats what is
asked, so a signature, which covers the body only, also covers the question:

===================  ====================  ==================================================
path                 ``type``              body
===================  ====================  ==================================================
``/facts``           ``facts.read``        ``kind``, ``target``
``/actions``         ``action.submit``     ``idempotency_key``, ``action`` (also the header
                                           ``Idempotency-Key``)
``/actions/status``  ``action.status``     ``idempotency_key``
``/customers/find``  ``customers.find``    ``email``
===================  ====================  ==================================================

Answers are JSON and unsigned (TLS vouches for them). An action is answered
``{"id", "status", "failure_reason"}`` with a status of :data:`STATUSES`; a customer
look-up with the merchant's customers who have that email, ``[{"id", "email"}]`` (an
empty list when none has it); an error ``{"error": {"code", "message"}}``. Bodies are
written by :func:`encode`: the same request is the same bytes every time it is sent, so
a receiver may compare a resend with the first request byte for byte. Amounts are
integers in the currency's minor unit, currencies lower-case ISO 4217 codes, times whole
seconds since the epoch.
"""

from __future__ import annotations

import json
import re
from typing import Any

from integrations.provider import ActionKind, ActionRequest

__all__ = [
    "ACTIONS_PATH",
    "ACTION_STATUS",
    "ACTION_SUBMIT",
    "CUSTOMERS_FIND",
    "CUSTOMERS_PATH",
    "FACTS_PATH",
    "FACTS_READ",
    "IDEMPOTENCY_CONFLICT",
    "IDEMPOTENCY_HEADER",
    "KEY_IN_USE",
    "KINDS",
    "MERCHANT_ID",
    "REPLAYED_HEADER",
    "STATUSES",
    "STATUS_PATH",
    "action_body",
    "customers_body",
    "encode",
    "facts_body",
    "status_body",
]

FACTS_PATH = "/facts"
ACTIONS_PATH = "/actions"
STATUS_PATH = "/actions/status"
CUSTOMERS_PATH = "/customers/find"

FACTS_READ = "facts.read"
ACTION_SUBMIT = "action.submit"
ACTION_STATUS = "action.status"
CUSTOMERS_FIND = "customers.find"

IDEMPOTENCY_HEADER = "Idempotency-Key"
# Set by a receiver on the answer to a resend it recognised (optional).
REPLAYED_HEADER = "Idempotent-Replayed"

# What a merchant may report about an action.
STATUSES = ("pending", "succeeded", "failed", "canceled")
# What the protocol does: a refund of a payment, a credit to a customer.
KINDS = (ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT)

# 409 codes: the key was used with another body (a person decides), or a request with
# it is still being worked on (its outcome is not known yet).
IDEMPOTENCY_CONFLICT = "idempotency_conflict"
KEY_IN_USE = "idempotency_key_in_use"

# The merchant's own ids (payments, customers, refunds, credits, lines): any it likes
# within this charset and length, since they are shown to people and stored.
MERCHANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}")


def encode(document: dict[str, Any]) -> str:
    """The exact text of a request body: compact, keys sorted, ASCII only."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def facts_body(kind: ActionKind, target: str) -> dict[str, Any]:
    """Ask for a payment (``refund``) or a customer (``customer_credit``)."""
    return {"type": FACTS_READ, "kind": kind.value, "target": target}


def action_body(request: ActionRequest) -> dict[str, Any]:
    """The one write; the same document on every send of the action."""
    return {
        "type": ACTION_SUBMIT,
        "idempotency_key": request.idempotency_key,
        "action": {
            "id": request.action_id,
            "kind": ActionKind(request.kind).value,
            "target": request.target,
            "amount": request.amount,
            "currency": request.currency,
            "params": dict(request.params),
            "metadata": dict(request.metadata),
        },
    }


def status_body(idempotency_key: str) -> dict[str, Any]:
    """Ask what became of the write sent under ``idempotency_key``."""
    return {"type": ACTION_STATUS, "idempotency_key": idempotency_key}


def customers_body(email: str) -> dict[str, Any]:
    """Ask for the merchant's customers whose email is ``email``."""
    return {"type": CUSTOMERS_FIND, "email": email}
