"""HTTP integrations: an account's outgoing calls when its tickets change, as Gorgias makes them.

An account configures integrations, each ``{url, method, headers, body_template,
triggers}``; triggers are ``ticket-created`` (a customer opened a ticket; its first
message fires nothing else), ``ticket-message-created`` (a customer wrote, or an agent
did, through the helpdesk or the API) and ``ticket-updated`` (its status changed).
Gorgias signs nothing: the receiver trusts the headers the merchant configured.

The sequence of one event: when it happens, every active integration of the account
that wants its trigger gets a delivery, its URL and body rendered then from the ticket
and message as the API shows them (:mod:`.templating`), so every retry sends the same
bytes; the kit's :class:`~integrations.sandbox_kit.Outbox` sends it in the background
(retries, pause). Each attempt that is not answered 2xx counts as a failure, a 2xx
resets the count, and after ``failure_limit`` (Gorgias: 100) consecutive failures the
integration is deactivated: it fires no more, and what it still had queued is dropped.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from integrations.sandbox_kit import Outbox, post

from .state import gorgias_time
from .templating import render_body, render_url

log = logging.getLogger(__name__)

JSON = dict[str, Any]

TRIGGERS = ("ticket-created", "ticket-updated", "ticket-message-created")
FAILURE_LIMIT = 100
DELIVERY_TIMEOUT = 10.0
RETRY_DELAYS = (5.0, 30.0, 120.0)
USER_AGENT = "Gorgias-HTTP-Integration"
_FIRST_ID = 301


@dataclass
class HttpIntegration:
    """One configured integration; ``deactivated`` is the sandbox time it was turned off."""

    id: int
    account: str
    name: str
    url: str
    method: str
    headers: dict[str, str]
    body_template: str
    triggers: tuple[str, ...]
    created: float
    deactivated: float | None = None
    consecutive_failures: int = 0

    def to_json(self) -> JSON:
        """Gorgias' Integration object (``http.form`` holds the body template), plus the
        sandbox's failure count."""
        return {
            "id": self.id,
            "uri": f"/api/integrations/{self.id}/",
            "type": "http",
            "name": self.name,
            "description": None,
            "http": {
                "url": self.url,
                "method": self.method,
                "headers": dict(self.headers),
                "form": self.body_template,
                "request_content_type": "application/json",
                "response_content_type": "application/json",
                "triggers": {trigger: trigger in self.triggers for trigger in TRIGGERS},
            },
            "created_datetime": gorgias_time(self.created),
            "updated_datetime": gorgias_time(self.created),
            "deactivated_datetime": (
                gorgias_time(self.deactivated) if self.deactivated is not None else None
            ),
            "consecutive_failures": self.consecutive_failures,
        }


@dataclass(frozen=True)
class IntegrationConfig:
    """What a merchant sets: checked when given, so a bad one is refused at once."""

    url: str
    body_template: str
    triggers: tuple[str, ...]
    method: str = "POST"
    headers: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self) -> None:
        if urlsplit(self.url).scheme not in ("http", "https"):
            raise ValueError("an integration's url must be http(s)")
        if self.method.upper() != "POST":
            raise ValueError("the sandbox's integrations send their body by POST")
        unknown = set(self.triggers) - set(TRIGGERS)
        if not self.triggers or unknown:
            raise ValueError(f"triggers must be some of {TRIGGERS}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items()):
            raise ValueError("headers must map names to strings")

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> IntegrationConfig:
        """From a control request: ``{url, method, headers, body_template, triggers, name}``."""
        known = {"url", "method", "headers", "body_template", "triggers", "name"}
        unknown = set(body) - known
        if unknown:
            raise ValueError(f"unknown integration fields: {sorted(unknown)}")
        url, triggers = body.get("url"), body.get("triggers")
        if not isinstance(url, str) or not isinstance(triggers, list):
            raise ValueError("an integration needs a url and a list of triggers")
        return cls(
            url=url,
            body_template=str(body.get("body_template") or ""),
            triggers=tuple(str(t) for t in triggers),
            method=str(body.get("method") or "POST"),
            headers=dict(body.get("headers") or {}),
            name=body.get("name"),
        )


class HttpIntegrations:
    """Every account's integrations and their deliveries (the sandbox's webhook side)."""

    def __init__(
        self,
        *,
        now: Callable[[], float],
        retry_delays: Sequence[float] = RETRY_DELAYS,
        timeout: float = DELIVERY_TIMEOUT,
        failure_limit: int = FAILURE_LIMIT,
    ) -> None:
        self._now = now
        self._timeout = timeout
        self._failure_limit = failure_limit
        self._lock = threading.Lock()
        self._integrations: dict[int, HttpIntegration] = {}
        self._ids = itertools.count(_FIRST_ID)
        self._events = itertools.count(1)
        self._outbox = Outbox(
            self._attempt, retry_delays=retry_delays, thread_name="gorgias-sandbox-integrations"
        )

    # -- configuration ---------------------------------------------------------------------

    def add(self, account: str, config: IntegrationConfig) -> HttpIntegration:
        """Configure an integration for ``account``."""
        with self._lock:
            integration_id = next(self._ids)
            integration = HttpIntegration(
                id=integration_id,
                account=account,
                name=config.name or f"HTTP integration {integration_id}",
                url=config.url,
                method=config.method.upper(),
                headers=dict(config.headers),
                body_template=config.body_template,
                triggers=config.triggers,
                created=self._now(),
            )
            self._integrations[integration_id] = integration
            return integration

    def get(self, integration_id: int) -> JSON:
        """One integration's JSON."""
        with self._lock:
            found = self._integrations.get(integration_id)
            if found is None:
                raise KeyError(f"no integration {integration_id}")
            return found.to_json()

    def of_account(self, account: str) -> list[JSON]:
        """The integrations of ``account``, oldest first."""
        with self._lock:
            return [i.to_json() for i in self._integrations.values() if i.account == account]

    # -- events ----------------------------------------------------------------------------

    def fire(self, account: str, trigger: str, context: Mapping[str, Any]) -> int:
        """Queue ``trigger`` for every active integration of ``account`` that wants it,
        rendered from ``context`` (``{"ticket": ..., "message": ...}``); returns how many."""
        with self._lock:
            wanting = [
                i
                for i in self._integrations.values()
                if i.account == account and i.deactivated is None and trigger in i.triggers
            ]
            event_id = f"evt_{next(self._events)}"
        ticket = context.get("ticket") or {}
        for integration in wanting:
            self._outbox.put(
                {
                    "event": event_id,
                    "trigger": trigger,
                    "account": account,
                    "integration": integration.id,
                    "ticket": ticket.get("id"),
                    "url": render_url(integration.url, context),
                    "body": render_body(integration.body_template, context),
                }
            )
        return len(wanting)

    def _attempt(self, target: JSON, attempt: int, manual: bool) -> JSON:
        record: JSON = {
            "event": target["event"],
            "trigger": target["trigger"],
            "integration": target["integration"],
            "ticket": target["ticket"],
            "url": target["url"],
            "attempt": attempt,
            "manual": manual,
            "at": time.time(),
        }
        with self._lock:
            integration = self._integrations.get(int(target["integration"]))
            if integration is None or integration.deactivated is not None:
                return record | {"ok": False, "retry": False, "error": "integration deactivated"}
            headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
            headers |= integration.headers
        record |= post(target["url"], str(target["body"]).encode(), headers, self._timeout)
        with self._lock:
            if record["ok"]:
                integration.consecutive_failures = 0
            else:
                integration.consecutive_failures += 1
                if integration.consecutive_failures >= self._failure_limit:
                    integration.deactivated = self._now()
                    log.warning(
                        "gorgias sandbox: integration %s deactivated after %s failures",
                        integration.id,
                        integration.consecutive_failures,
                    )
        return record

    # -- the kit's delivery controls -------------------------------------------------------

    def start(self) -> None:
        """Start the delivery thread."""
        self._outbox.start()

    def stop(self) -> None:
        """Stop delivering; queued deliveries stay queued."""
        self._outbox.stop(timeout=self._timeout + 1)

    def pause(self) -> None:
        """Hold every delivery until :meth:`resume`."""
        self._outbox.pause()

    def resume(self) -> None:
        """Deliver what was held, in the order it was queued."""
        self._outbox.resume()

    def pending(self) -> list[JSON]:
        """Queued deliveries, oldest first."""
        return self._outbox.pending()

    def discard(self, event_id: str | None = None) -> int:
        """Drop queued deliveries (of one event, or all); returns how many."""
        if event_id is None:
            return self._outbox.discard()
        return self._outbox.discard(lambda target: target["event"] == event_id)

    def attempts(self) -> list[JSON]:
        """Every delivery attempt so far."""
        return self._outbox.attempts()

    def wait_idle(self, timeout: float) -> bool:
        """Poll until no delivery is runnable or in flight (or ``timeout``)."""
        return self._outbox.wait_idle(timeout)

    def clear(self) -> None:
        """Forget every integration, queued delivery and attempt."""
        with self._lock:
            self._integrations.clear()
        self._outbox.clear()
