"""The receiving server as an object: a merchant's endpoint as the protocol wants it.

:class:`MerchantReceiver` serves the four paths of :mod:`..protocol`; serving over
HTTP, faults, holds and latency come from the shared kit's
:class:`~integrations.sandbox_kit.SandboxBase`. Its records live in :class:`.store.Store`
(a SQLite file under the data directory), so a restarted receiver knows every payment,
key and effect it had.

The sequence of one request (:meth:`MerchantReceiver.handle_api`): record its arrival
with its headers; answer a refusal the test queued (:meth:`refuse_next`), if any; only
``POST`` to the four paths exists (else 404); verify the signature with the secrets
held (else 401 ``signature_refused``: unsigned, tampered, expired or signed with a secret
it does not hold); the body's ``type`` must be the path's; ask the fault board for the
request's plan (drop or 500 before committing, holds, delays); claim an action's key (a
second request with a key being worked on gets 409 ``idempotency_key_in_use``); serve
it: facts are read, customers are found by email (compared case-insensitively, deleted
ones left out), a status is looked up by key, an action runs under its idempotency
key (the first body sent with a key is kept with its effect in one transaction; a resend
of those bytes gets the effect's answer again, marked ``Idempotent-Replayed``; the key
with other bytes gets 409 ``idempotency_conflict``); then let the plan exit the process
(:meth:`exit_after_commit`), answer 500, wait, or drop the connection; record the answer.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from integrations.sandbox_kit import (
    FAULT_HEADER,
    Clock,
    Dispatch,
    NoDeliveries,
    Response,
    SandboxBase,
)

from ..protocol import (
    ACTION_STATUS,
    ACTION_SUBMIT,
    ACTIONS_PATH,
    CUSTOMERS_FIND,
    CUSTOMERS_PATH,
    FACTS_PATH,
    FACTS_READ,
    IDEMPOTENCY_CONFLICT,
    IDEMPOTENCY_HEADER,
    KEY_IN_USE,
    MERCHANT_ID,
    REPLAYED_HEADER,
    STATUS_PATH,
)
from ..signing import SignatureRefused, verify
from .control import receiver_control_router
from .store import Store

log = logging.getLogger(__name__)

JSON = dict[str, Any]

_TYPES = {
    FACTS_PATH: FACTS_READ,
    ACTIONS_PATH: ACTION_SUBMIT,
    STATUS_PATH: ACTION_STATUS,
    CUSTOMERS_PATH: CUSTOMERS_FIND,
}
# The process's exit status when a fault makes it exit after a commit.
CRASH_EXIT_STATUS = 70


class _Refusal(Exception):
    """An answer other than success: its status, error code, message and ``Retry-After``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        retry_after: float | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        # Queued refusals only: the path they answer (None: whichever request comes next).
        self.path = path


class MerchantReceiver(SandboxBase):
    """A merchant's endpoint for Caseward, with its records in ``data_dir`` (None: memory)."""

    serving_name = "merchant-receiver"

    def __init__(
        self,
        data_dir: Path | None = None,
        *,
        clock: Clock | None = None,
        control_token: str | None = None,
        background_interval: float = 1.0,
    ) -> None:
        super().__init__(
            clock=clock, control_token=control_token, background_interval=background_interval
        )
        self.store = Store(data_dir)
        self._exits_after_commit = 0
        self._refusals: list[_Refusal] = []
        # Keys of actions being worked on now: another request with one gets 409.
        self._working: set[str] = set()
        self._state_lock = threading.Lock()
        self._no_webhooks = NoDeliveries()

    # -- the provider's parts ---------------------------------------------------------

    def _control(self) -> Dispatch:
        return receiver_control_router(self).handle

    def _failure(self) -> Response:
        return _error(500, "internal", "the receiver failed to serve the request")

    @property
    def _deliveries(self) -> NoDeliveries:
        return self._no_webhooks

    def process_due(self) -> int:
        """Nothing happens later at this receiver."""
        return 0

    def stop(self) -> None:
        super().stop()
        self.store.close()

    # -- serving ----------------------------------------------------------------------

    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one request, recording it as it arrives and then its answer."""
        path = target.partition("?")[0]
        entry = self.received.arrived(method, target, None, headers.get(IDEMPOTENCY_HEADER))
        number = self.store.arrived(method.upper(), path, dict(headers), self.now())
        response = self._serve(number, method.upper(), path, headers, body)
        self.received.answered(entry, response)
        self.store.answered(
            number,
            status=None if response.drop else response.status,
            dropped=response.drop,
            replayed=response.replayed,
        )
        return response

    def _serve(
        self, number: int, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        _pause(self.faults.latency_ms)
        refusal = self._next_refusal(path)
        if refusal is not None:
            return _error(refusal.status, refusal.code, refusal.message, refusal.retry_after)
        try:
            document = self._admit(number, method, path, headers, body)
            plan = self.faults.plan_for(
                method, path, headers.get(IDEMPOTENCY_HEADER), None, headers.get(FAULT_HEADER)
            )
        except _Refusal as refused:
            return _error(refused.status, refused.code, refused.message)
        except ValueError as exc:  # a malformed fault header
            return _error(400, "invalid_request", str(exc))
        if plan.drop_before or plan.error_before:
            _pause(plan.delay_before_ms)
            return Response(drop=True) if plan.drop_before else self._failure()
        key = document.get("idempotency_key") if path == ACTIONS_PATH else None
        if isinstance(key, str) and not self._claim(key):
            return _error(409, KEY_IN_USE, "a request with this key is being worked on")
        try:
            self.faults.wait_at_holds(plan)
            _pause(plan.delay_before_ms)
            response, committed = self._answer(path, headers, document, body)
        except _Refusal as refused:
            response, committed = _error(refused.status, refused.code, refused.message), False
        finally:
            if isinstance(key, str):
                self._release(key)
        if committed:
            self._exit_if_asked()
        if plan.error_after:
            response = self._failure()
        _pause(plan.delay_after_ms)
        return Response(drop=True) if plan.drop_after else response

    def _admit(
        self, number: int, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> JSON:
        """Route, signature and type, in that order; the verified body."""
        if method != "POST" or path not in _TYPES:
            raise _Refusal(404, "not_found", f"no endpoint {method} {path}")
        try:
            document = verify(body, headers, self.store.secrets())
        except SignatureRefused as exc:
            self.store.read(number, verified=False, body_key=None, body_type=None)
            raise _Refusal(401, "signature_refused", str(exc)) from exc
        except ValueError as exc:
            raise _Refusal(400, "invalid_request", "the body is not JSON") from exc
        if not isinstance(document, dict):
            raise _Refusal(400, "invalid_request", "the body is not a JSON object")
        key = document.get("idempotency_key")
        self.store.read(
            number,
            verified=True,
            body_key=key if isinstance(key, str) else None,
            body_type=str(document.get("type")),
        )
        if document.get("type") != _TYPES[path]:
            raise _Refusal(400, "invalid_request", f"{path} takes type {_TYPES[path]}")
        return document

    def _answer(
        self, path: str, headers: Mapping[str, str], document: JSON, body: bytes
    ) -> tuple[Response, bool]:
        """The answer, and whether an action was committed to give it."""
        if path == FACTS_PATH:
            return self._facts(document), False
        if path == STATUS_PATH:
            return self._status(document), False
        if path == CUSTOMERS_PATH:
            return self._customers(document), False
        return self._act(headers, document, body.decode("utf-8"))

    def _facts(self, document: JSON) -> Response:
        kind, target = document.get("kind"), str(document.get("target"))
        with self.store.transaction() as db:
            if kind == "refund":
                found = self.store.payment(db, target)
            elif kind == "customer_credit":
                found = self.store.customer(db, target)
            else:
                raise _Refusal(400, "unsupported", f"no facts for {kind!r}")
        if found is None:
            raise _Refusal(404, "not_found", f"no such {kind} target {target}")
        return _json(200, found)

    def _customers(self, document: JSON) -> Response:
        email = document.get("email")
        if not isinstance(email, str) or not email:
            raise _Refusal(400, "invalid_request", "email is required")
        with self.store.transaction() as db:
            found = self.store.customers_with_email(db, email)
        return _json(200, found)

    def _status(self, document: JSON) -> Response:
        key = _key(document)
        with self.store.transaction() as db:
            first = self.store.first_request(db, key)
        if first is None:
            raise _Refusal(404, "not_found", "nothing was done under this key")
        return _json(200, _action_answer(first[1]))

    def _act(self, headers: Mapping[str, str], document: JSON, body: str) -> tuple[Response, bool]:
        key = _key(document)
        if headers.get(IDEMPOTENCY_HEADER) != key:
            raise _Refusal(400, "invalid_request", "the Idempotency-Key header is the body's key")
        action = document.get("action")
        if not isinstance(action, dict):
            raise _Refusal(400, "invalid_request", "action must be an object")
        with self.store.transaction() as db:
            first = self.store.first_request(db, key)
            if first is not None:
                first_body, effect = first
                if first_body != body:
                    raise _Refusal(
                        409, IDEMPOTENCY_CONFLICT, "this key was used with another request"
                    )
                answer = _json(200, _action_answer(effect))
                answer.headers[REPLAYED_HEADER] = "true"
                answer.replayed = True
                return answer, False
            effect = self._effect(db, action)
            self.store.make_effect(db, effect, key=key, body=body)
        return _json(200, _action_answer(effect)), True

    def _effect(self, db: Any, action: JSON) -> JSON:
        """The refund or credit ``action`` asks for, checked as a merchant would."""
        kind, target = action.get("kind"), action.get("target")
        amount, currency = action.get("amount"), action.get("currency")
        metadata = action.get("metadata")
        if not isinstance(target, str) or not MERCHANT_ID.fullmatch(target):
            raise _Refusal(400, "invalid_request", "target is not an id")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise _Refusal(400, "invalid_request", "amount is a positive number of minor units")
        if not isinstance(metadata, dict):
            raise _Refusal(400, "invalid_request", "metadata must be an object")
        if kind == "refund":
            payment = self.store.payment(db, target)
            if payment is None:
                raise _Refusal(400, "no_such_payment", f"no payment {target}")
            if currency != payment["currency"]:
                raise _Refusal(
                    400, "currency_mismatch", f"payment {target} is in {payment['currency']}"
                )
            refunded = sum(
                r["amount"] for r in payment["refunds"] if r["status"] in ("pending", "succeeded")
            )
            if amount > payment["captured"] - refunded:
                raise _Refusal(400, "amount_too_large", "more than what is left of the payment")
            prefix = "rf"
        elif kind == "customer_credit":
            customer = self.store.customer(db, target)
            if customer is None or customer["deleted"]:
                raise _Refusal(400, "no_such_customer", f"no customer {target}")
            prefix = "cr"
        else:
            raise _Refusal(400, "unsupported", f"this receiver does not do {kind!r}")
        return {
            "id": self.store.next_effect_id(db, prefix),
            "kind": kind,
            "target": target,
            "amount": amount,
            "currency": currency,
            "status": "succeeded",
            "metadata": {str(k): str(v) for k, v in metadata.items()},
            "created": int(self.now()),
        }

    # -- controls -----------------------------------------------------------------------

    def set_secrets(self, secrets: list[str]) -> None:
        """The secrets requests must be signed with (one of them), replacing those held."""
        self.store.set_secrets(secrets)

    def seed_payment(
        self,
        payment_id: str,
        *,
        amount: int,
        currency: str,
        customer: str | None,
        captured: int | None = None,
        disputed: bool = False,
    ) -> None:
        """A payment of ``customer``, captured whole unless ``captured`` says less."""
        if not MERCHANT_ID.fullmatch(payment_id):
            raise ValueError(f"{payment_id!r} is not an id")
        self.store.put_payment(
            {
                "id": payment_id,
                "currency": currency.lower(),
                "amount": amount,
                "captured": amount if captured is None else captured,
                "disputed": disputed,
                "customer": customer,
                "created": int(self.now()),
            }
        )

    def seed_customer(
        self,
        customer_id: str,
        *,
        email: str | None = None,
        currency: str | None = None,
        deleted: bool = False,
    ) -> None:
        """A customer, with the currency of the credits it holds (None: none yet)."""
        if not MERCHANT_ID.fullmatch(customer_id):
            raise ValueError(f"{customer_id!r} is not an id")
        self.store.put_customer(
            {
                "id": customer_id,
                "email": email,
                "currency": currency.lower() if currency else None,
                "deleted": deleted,
            }
        )

    def refuse_next(
        self,
        status: int,
        code: str,
        *,
        count: int = 1,
        retry_after: float | None = None,
        path: str | None = None,
    ) -> None:
        """Answer the next ``count`` requests (to ``path``, when given) ``status`` with
        ``code`` before reading them (a 429 with ``Retry-After``, a 401, a 403 ...):
        nothing runs for them."""
        if not 400 <= status < 600 or count < 1:
            raise ValueError("status is a 4xx or 5xx and count at least 1")
        message = f"refused as the test asked ({code})"
        refusal = _Refusal(status, code, message, retry_after, path)
        with self._state_lock:
            self._refusals.extend([refusal] * count)

    def exit_after_commit(self, count: int = 1) -> None:
        """The next ``count`` actions committed: the process exits right after the commit,
        answering nothing, as a receiver that crashed would (only for a receiver run as a
        process: it ends the process it runs in)."""
        if count < 0:
            raise ValueError("count must not be negative")
        with self._state_lock:
            self._exits_after_commit = count

    def reset(self) -> None:
        """Forget records, keys, secrets, requests and faults."""
        self.faults.clear()
        self.received.clear()
        self.store.reset()
        with self._state_lock:
            self._exits_after_commit = 0
            self._refusals.clear()

    def _next_refusal(self, path: str) -> _Refusal | None:
        with self._state_lock:
            for place, refusal in enumerate(self._refusals):
                if refusal.path in (None, path):
                    return self._refusals.pop(place)
            return None

    def _claim(self, key: str) -> bool:
        with self._state_lock:
            if key in self._working:
                return False
            self._working.add(key)
            return True

    def _release(self, key: str) -> None:
        with self._state_lock:
            self._working.discard(key)

    def _exit_if_asked(self) -> None:
        with self._state_lock:
            if self._exits_after_commit <= 0:
                return
            self._exits_after_commit -= 1
        log.warning("merchant receiver exiting after a commit, as asked")
        os._exit(CRASH_EXIT_STATUS)


def _key(document: JSON) -> str:
    key = document.get("idempotency_key")
    if not isinstance(key, str) or not 0 < len(key) <= 255:
        raise _Refusal(400, "invalid_request", "idempotency_key is required")
    return key


def _action_answer(effect: JSON) -> JSON:
    return {"id": effect["id"], "status": effect["status"], "failure_reason": None}


def _json(status: int, body: JSON | list[JSON]) -> Response:
    return Response(status, json.dumps(body).encode("utf-8"), {"Content-Type": "application/json"})


def _error(status: int, code: str, message: str, retry_after: float | None = None) -> Response:
    response = _json(status, {"error": {"code": code, "message": message}})
    if retry_after is not None:
        response.headers["Retry-After"] = f"{retry_after:g}"
    return response


def _pause(ms: int) -> None:
    if ms > 0:
        time.sleep(ms / 1000.0)
