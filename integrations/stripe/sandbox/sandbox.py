"""The sandbox as an object: state, clock, background work, servers, and test controls.

:class:`StripeSandbox` owns everything; serving over HTTP, time, faults, holds, latency,
the request log and the webhook switches come from the shared kit's
:class:`~integrations.sandbox_kit.SandboxBase` (``start`` returns a
:class:`~integrations.sandbox_kit.SandboxHandle`); the ticker here also saves the
snapshot, and so does ``stop``. Every control the HTTP ``/_sandbox/`` endpoints
offer is a method here too, so in-process tests steer the sandbox without HTTP.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from integrations.sandbox_kit import Clock, Dispatch, Fault, Response, SandboxBase

from .auth import Account, make_key, new_account_id, normalize_permissions
from .context import Config, Ctx
from .control import Control
from .engine import Engine, encode
from .errors import api_error
from .history import seed_history
from .idempotency import IdempotencyStore
from .ratelimit import RateLimiter, RateLimits
from .resources import disputes as dispute_resource
from .resources.refunds import REFUND_MODES
from .store import Store, read_snapshot, write_snapshot
from .tasks import run_due
from .webhooks import WebhookDispatcher

JSON = dict[str, Any]

DEMO_ACCOUNT_ID = "acct_1CasewardDemo000"
# Fixed, public demo credentials: the offline demo is configured with them.
DEMO_SECRET_KEY = "sk_test_51CasewardDemoSecretKeyForTheOfflineSandbox0000000000"  # noqa: S105
DEMO_RESTRICTED_KEY = "rk_test_51CasewardDemoRestrictedKeyForTheOfflineSandbox000000"
DEMO_PERMISSIONS: dict[str, str] = {
    "charges": "read",
    "payment_intents": "read",
    "payment_methods": "read",
    "refunds": "write",
    "customers": "write",
    "coupons": "write",
    "promotion_codes": "write",
    "subscriptions": "write",
    "prices": "read",
    "products": "read",
    "disputes": "read",
    "events": "read",
    "webhook_endpoints": "write",
}


@dataclass
class RestrictedKey:
    """A restricted key as handed to a test or the demo."""

    key: str
    permissions: dict[str, str]
    livemode: bool


@dataclass
class AccountKeys:
    """A new account's id and keys (live ones only when live mode was asked for)."""

    id: str
    secret_key: str
    live_secret_key: str | None = None
    restricted_keys: list[RestrictedKey] = field(default_factory=list)

    def to_json(self) -> JSON:
        """Control-endpoint form."""
        return {
            "id": self.id,
            "secret_key": self.secret_key,
            "live_secret_key": self.live_secret_key,
            "restricted_keys": [
                {"key": k.key, "permissions": k.permissions, "livemode": k.livemode}
                for k in self.restricted_keys
            ],
        }


class StripeSandbox(SandboxBase):
    """An in-memory Stripe that the real ``stripe`` SDK can talk to."""

    serving_name = "stripe-sandbox"

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        snapshot_path: str | Path | None = None,
        control_token: str | None = None,
        refund_failure_delay: float = 60.0,
        dispute_delay: float = 2.0,
        webhook_retry_delays: Sequence[float] = (1.0, 5.0, 30.0, 120.0, 600.0),
        webhook_timeout: float = 10.0,
        demo_account: bool = False,
        background_interval: float = 0.25,
        rate_limits: RateLimits | None = None,
    ) -> None:
        super().__init__(
            clock=clock, control_token=control_token, background_interval=background_interval
        )
        self.config = Config(refund_failure_delay=refund_failure_delay, dispute_delay=dispute_delay)
        self.store = Store()
        self.events = WebhookDispatcher(
            self.store, retry_delays=webhook_retry_delays, timeout=webhook_timeout
        )
        self.idempotency = IdempotencyStore()
        self.limiter = RateLimiter(rate_limits)
        self.engine = Engine(
            self,
            faults=self.faults,
            idempotency=self.idempotency,
            limiter=self.limiter,
            run_due=self.process_due,
        )
        self.snapshot_path = Path(snapshot_path) if snapshot_path else None
        self.demo = demo_account
        self._snapshot_lock = threading.Lock()
        if self.snapshot_path is not None:
            self.load_snapshot(self.snapshot_path)
        if self.demo:
            self._ensure_demo_account()

    # -- serving ---------------------------------------------------------------------------

    def _control(self) -> Dispatch:
        return Control(self).handle

    def _failure(self) -> Response:
        """Stripe's answer when the sandbox itself fails: a 500 ``api_error``."""
        return Response(500, encode(api_error().body()), {"Content-Type": "application/json"})

    @property
    def _deliveries(self) -> WebhookDispatcher:
        return self.events

    def stop(self) -> None:
        """Stop the server and background work; save the snapshot if configured."""
        super().stop()
        if self.snapshot_path is not None:
            self.save_snapshot()

    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one Stripe API request (the HTTP server calls this), recording it as it
        arrives and then its answer."""
        entry = self.received.arrived(
            method, target, self.engine.account_of(headers), headers.get("Idempotency-Key")
        )
        response = self.engine.handle(method, target, headers, body)
        self.received.answered(entry, response)
        return response

    def _tick(self) -> None:
        """One round of the ticker: due transitions, then the snapshot if anything moved."""
        self.process_due()
        if self.snapshot_path is not None and self.store.dirty:
            self.save_snapshot()

    # -- accounts --------------------------------------------------------------------------

    def create_account(
        self,
        *,
        live: bool = False,
        restricted_keys: Sequence[Mapping[str, Any]] = (),
        api_version: str | None = None,
        account_id: str | None = None,
        secret_key: str | None = None,
        rate_limits: RateLimits | None = None,
    ) -> AccountKeys:
        """Create an account with a test secret key (and a live one when ``live``).

        ``restricted_keys`` items: ``{"permissions": {"refunds": "write", ...},
        "livemode": False, "key": optional fixed value}``. ``rate_limits`` replaces the
        sandbox-wide rate limits for this account."""
        for spec in restricted_keys:  # refuse bad permissions before creating anything
            normalize_permissions(dict(spec.get("permissions") or {}))
            if spec.get("livemode") and not live:
                raise ValueError("a live restricted key needs an account with live mode")
        with self.store.lock:
            account = Account(id=account_id or new_account_id(), live_enabled=live)
            if api_version:
                account.api_version = api_version
            if account.id in self.store.accounts:
                raise ValueError(f"account {account.id} already exists")
            self.store.accounts[account.id] = account
            test_key = make_key(account.id, livemode=False, restricted=False, secret=secret_key)
            self.store.keys[test_key.secret] = test_key
            result = AccountKeys(id=account.id, secret_key=test_key.secret)
            if live:
                live_key = make_key(account.id, livemode=True, restricted=False)
                self.store.keys[live_key.secret] = live_key
                result.live_secret_key = live_key.secret
            for spec in restricted_keys:
                result.restricted_keys.append(
                    self.add_restricted_key(
                        account.id,
                        dict(spec.get("permissions") or {}),
                        livemode=bool(spec.get("livemode", False)),
                        key=spec.get("key"),
                    )
                )
            self.store.dirty = True
        if rate_limits is not None:
            self.limiter.configure(rate_limits, account=result.id)
        return result

    def add_restricted_key(
        self,
        account_id: str,
        permissions: Mapping[str, str],
        *,
        livemode: bool = False,
        key: str | None = None,
        name: str | None = None,
    ) -> RestrictedKey:
        """Mint an ``rk_`` key with per-resource ``none``/``read``/``write`` permissions."""
        with self.store.lock:
            account = self._account(account_id)
            if livemode and not account.live_enabled:
                raise ValueError(f"account {account_id} has no live mode")
            api_key = make_key(
                account_id,
                livemode=livemode,
                restricted=True,
                permissions=permissions,
                name=name,
                secret=key,
            )
            if api_key.secret in self.store.keys:
                raise ValueError("that key already exists")
            self.store.keys[api_key.secret] = api_key
            self.store.dirty = True
            return RestrictedKey(api_key.secret, dict(api_key.permissions), livemode)

    def revoke_key(self, secret: str) -> None:
        """Delete a key, as rolling or deleting it in the dashboard does: from the next
        request on, Stripe answers 401 to it, however many requests it authenticated."""
        with self.store.lock:
            if self.store.keys.pop(secret, None) is None:
                raise KeyError("no such key")
            self.store.dirty = True

    def _account(self, account_id: str) -> Account:
        account = self.store.accounts.get(account_id)
        if account is None:
            raise KeyError(f"no account {account_id}")
        return account

    def _ensure_demo_account(self) -> None:
        if DEMO_ACCOUNT_ID in self.store.accounts:
            return
        self.create_account(
            account_id=DEMO_ACCOUNT_ID,
            secret_key=DEMO_SECRET_KEY,
            restricted_keys=[{"permissions": DEMO_PERMISSIONS, "key": DEMO_RESTRICTED_KEY}],
        )

    # -- account switches ------------------------------------------------------------------

    def set_balance(self, account_id: str, *, sufficient: bool, livemode: bool = False) -> None:
        """Make the available balance (in)sufficient for refunds; restoring it lets
        refunds pending for ``insufficient_funds`` go through."""
        with self.store.lock:
            self._account(account_id)
            self.store.space(account_id, livemode).settings["balance_sufficient"] = sufficient
            self.store.dirty = True
        self.process_due()

    def set_refund_mode(
        self,
        account_id: str,
        mode: str | None,
        *,
        settle_after: float = 0.0,
        livemode: bool = False,
    ) -> None:
        """Force new refunds into ``requires_action`` or ``pending`` (``pending_processing``,
        ``charge_pending``; these settle after ``settle_after`` sandbox seconds); ``None``
        restores normal card behaviour."""
        if mode is not None and mode not in REFUND_MODES:
            raise ValueError(f"refund mode must be one of {REFUND_MODES} or None")
        with self.store.lock:
            self._account(account_id)
            settings = self.store.space(account_id, livemode).settings
            settings["refund_mode"] = mode
            settings["refund_settle_after"] = float(settle_after)
            self.store.dirty = True

    def set_rate_limits(self, limits: RateLimits | None, *, account: str | None = None) -> None:
        """Limit requests per second as Stripe does (429 past the limit). Without
        ``account``: for every account (``None`` turns limiting off). With it: for that
        account only (``None`` makes it follow the sandbox-wide limits again;
        ``RateLimits.off()`` exempts it)."""
        if account is not None:
            self._account(account)
        self.limiter.configure(limits, account=account)

    # -- history ---------------------------------------------------------------------------

    def seed_history(self, account_id: str, records: list[JSON], *, livemode: bool = False) -> JSON:
        """Write past money actions into an account at the times they happened, all at
        once (see :mod:`.history` for the records and the answer). Raises ``ValueError``
        before writing anything when a record is wrong."""
        with self.store.lock:
            account = self._account(account_id)
            if livemode and not account.live_enabled:
                raise ValueError(f"account {account_id} has no live mode")
            ctx = Ctx(core=self, account=account, space=self.store.space(account_id, livemode))
            return seed_history(ctx, records)

    # -- time ------------------------------------------------------------------------------

    def process_due(self) -> int:
        """Perform scheduled transitions that are due (refund failures, disputes...)."""
        return run_due(self)

    # -- faults ----------------------------------------------------------------------------

    def arm_fault(
        self,
        kind: str,
        *,
        method: str | None = None,
        path: str | None = None,
        idempotency_key: str | None = None,
        account: str | None = None,
        count: int = 1,
        ms: int = 0,
        when: str = "before",
    ) -> Fault:
        """Arm a fault for the next ``count`` requests matching every given filter
        (``path`` and ``idempotency_key`` may be globs such as ``/v1/refunds*``)."""
        return self.faults.arm(
            Fault(
                kind=kind,
                method=method,
                path=path,
                idempotency_key=idempotency_key,
                account=account,
                count=count,
                ms=ms,
                when=when,
            )
        )

    # -- webhooks --------------------------------------------------------------------------

    def deliver_event(self, event_id: str, endpoint_id: str | None = None) -> list[JSON]:
        """(Re)deliver one event right now, whatever the queue holds."""
        return self.events.deliver(event_id, endpoint_id)

    # -- disputes --------------------------------------------------------------------------

    def close_dispute(self, dispute_id: str, status: str = "won") -> JSON:
        """Close a dispute as ``won``, ``lost`` or ``warning_closed``."""
        with self.store.lock:
            for space in self.store.all_spaces():
                dispute = space.get("disputes", dispute_id)
                if dispute is not None:
                    ctx = Ctx(core=self, account=self._account(space.account_id), space=space)
                    return dict(dispute_resource.close(ctx, dispute, status))
        raise KeyError(f"no dispute {dispute_id}")

    # -- state -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget all accounts, objects, keys, faults, queued webhooks and requests received."""
        self.store.clear()
        self.idempotency.clear()
        self.limiter.clear()
        self.faults.clear()
        self.events.clear()
        self.received.clear()
        if self.demo:
            self._ensure_demo_account()

    def snapshot(self) -> JSON:
        """The whole state as one JSON document."""
        with self.store.lock:
            self.store.dirty = False
            return {
                "clock": self.clock.state(),
                "store": self.store.to_json(),
                "idempotency": self.idempotency.to_json(),
                "webhooks": self.events.to_json(),
            }

    def save_snapshot(self, path: str | Path | None = None) -> Path:
        """Write the state to ``path`` (default: the configured snapshot file)."""
        target = Path(path) if path is not None else self.snapshot_path
        if target is None:
            raise ValueError("no snapshot path configured")
        with self._snapshot_lock:
            write_snapshot(target, self.snapshot())
        return target

    def load_snapshot(self, path: str | Path) -> bool:
        """Restore state from ``path``; ``False`` when the file does not exist yet."""
        document = read_snapshot(Path(path))
        if document is None:
            return False
        self.store.load_json(document.get("store") or {})
        self.idempotency.load_json(document.get("idempotency") or [])
        self.events.load_json(document.get("webhooks") or [])
        with contextlib.suppress(TypeError, ValueError):
            self.clock.restore(document.get("clock") or {})
        self.store.dirty = False
        return True

    def iter_accounts(self) -> Iterator[str]:
        """Ids of every account."""
        return iter(list(self.store.accounts))
