"""One API request, from headers to bytes: auth, faults, idempotency, execution.

Kept apart from the HTTP plumbing so the order of Stripe's checks is readable in one
place: authenticate the key, check the ``Stripe-Version`` header, apply the account's rate
limit, find the endpoint, check the restricted key's permission, validate parameters,
claim the idempotency key, run the handler under the store lock, save the response for
the key, and only then let a fault drop or spoil the answer. Nothing before the claim is
ever saved under an idempotency key: a 429 or a 400 there leaves the key unused.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from integrations.sandbox_kit import FAULT_HEADER, FaultBoard, Plan, Response

from . import resources  # noqa: F401 - registers the routes
from .auth import ApiKey, permission_denied, unauthorized, wrong_account
from .context import Core, Ctx, apply_expand, check_expand, expand_paths
from .errors import StripeApiError, api_error, invalid_version, rate_limited
from .forms import Params, parse_form
from .idempotency import IdempotencyStore, Outcome, check_key
from .ids import new_id
from .ratelimit import RateLimiter, retry_after_header
from .routing import Route, resolve

log = logging.getLogger(__name__)

JSON = dict[str, Any]


def encode(body: JSON) -> bytes:
    """Stripe's JSON: pretty-printed, stable, so replays are byte-identical."""
    return json.dumps(body, indent=2).encode("utf-8")


def should_retry_header(status: int) -> str | None:
    """Default ``Stripe-Should-Retry``: true for a held key (409), false for client errors.

    500s carry their own answer: true only when nothing ran (a retry may succeed), false
    once the request committed (a retry would replay the 500, or duplicate the work if
    sent without the same idempotency key)."""
    if status == 409:
        return "true"
    if status >= 400:
        return "false"
    return None


# ``2026-07-29.dahlia`` or ``2024-06-20``, optionally with preview flags (``; x_beta=v1``).
_VERSION = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:\.[a-z]+)?(?:;\s*[a-z0-9_]+=v\d+)*$")


def check_version(version: str) -> None:
    """Refuse a ``Stripe-Version`` that is not a dated API version, as Stripe does."""
    match = _VERSION.match(version)
    try:
        if match is None:
            raise ValueError(version)
        date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        raise invalid_version(version) from None


def _presented_key(headers: Mapping[str, str]) -> str | None:
    value = headers.get("Authorization") or ""
    scheme, _, credential = value.partition(" ")
    if scheme.lower() == "bearer":
        return credential.strip() or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credential.strip()).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[0] or None
    return None


@dataclass
class _Request:
    """A request that passed authentication, routing and validation."""

    method: str
    path: str
    key: ApiKey
    route: Route
    path_args: dict[str, str]
    params: Params
    expand: list[str]
    idem_key: str | None
    base: dict[str, str]

    @property
    def request_id(self) -> str:
        """Stripe's ``req_`` id of this request."""
        return self.base["Request-Id"]


class Engine:
    """Stripe's request pipeline over the sandbox state."""

    def __init__(
        self,
        core: Core,
        *,
        faults: FaultBoard,
        idempotency: IdempotencyStore,
        limiter: RateLimiter,
        run_due: Callable[[], object],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.core = core
        self.faults = faults
        self.idempotency = idempotency
        self.limiter = limiter
        self._run_due = run_due
        self._sleep = sleep

    # -- helpers ---------------------------------------------------------------------------

    def _pause(self, ms: int) -> None:
        if ms > 0:
            self._sleep(ms / 1000.0)

    def _error(self, err: StripeApiError, base: dict[str, str], *, livemode: bool) -> Response:
        body = err.body()
        if err.status != 401:
            mode = "" if livemode else "test/"
            body["error"]["request_log_url"] = (
                f"https://dashboard.stripe.com/{mode}logs/{base['Request-Id']}?t={int(self.core.clock.now())}"
            )
            body["error"] = dict(sorted(body["error"].items()))
        headers = dict(base)
        retry = (
            ("true" if err.should_retry else "false")
            if err.should_retry is not None
            else should_retry_header(err.status)
        )
        if retry is not None:
            headers["Stripe-Should-Retry"] = retry
        return Response(err.status, encode(body), headers)

    def _authenticate(self, headers: Mapping[str, str]) -> ApiKey:
        presented = _presented_key(headers)
        key = self.core.store.keys.get(presented or "")
        if key is None or key.account_id not in self.core.store.accounts:
            raise unauthorized(presented)
        return key

    def account_of(self, headers: Mapping[str, str]) -> str | None:
        """The account whose key a request presents; ``None`` for a missing or unknown key."""
        key = self.core.store.keys.get(_presented_key(headers) or "")
        return key.account_id if key is not None else None

    # -- the pipeline ----------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Serve one Stripe API request."""
        request_id = new_id("req")
        base = {
            "Content-Type": "application/json",
            "Request-Id": request_id,
            "Cache-Control": "no-cache, no-store",
        }
        self._pause(self.faults.latency_ms)
        prepared = self._prepare(method.upper(), target, headers, body, base)
        if isinstance(prepared, Response):
            return prepared
        req = prepared
        try:
            plan = self.faults.plan_for(
                req.method, req.path, req.idem_key, req.key.account_id, headers.get(FAULT_HEADER)
            )
        except ValueError as exc:
            bad = StripeApiError(400, f"Invalid {FAULT_HEADER} header: {exc}", should_retry=False)
            return self._error(bad, base, livemode=req.key.livemode)
        if plan.drop_before:
            self._pause(plan.delay_before_ms)
            return Response(drop=True)
        if plan.error_before:
            self._pause(plan.delay_before_ms)
            return self._error(api_error(should_retry=True), base, livemode=req.key.livemode)
        if req.idem_key is None:
            response, _executed = self._execute(req, plan)
            return self._finish(response, plan)
        return self._idempotent(req, plan)

    def _prepare(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes,
        base: dict[str, str],
    ) -> _Request | Response:
        """Everything Stripe checks before an endpoint runs; errors here are never saved."""
        path, _, query = target.partition("?")
        key: ApiKey | None = None
        try:
            key = self._authenticate(headers)
            account = self.core.store.accounts[key.account_id]
            base["Stripe-Version"] = account.api_version
            asked_version = headers.get("Stripe-Version")
            if asked_version:
                check_version(asked_version)
                base["Stripe-Version"] = asked_version
            wait = self.limiter.admit(
                key.account_id, key.livemode, "read" if method == "GET" else "write"
            )
            if wait is not None:
                limited = self._error(rate_limited(), base, livemode=key.livemode)
                limited.headers["Retry-After"] = retry_after_header(wait)
                return limited
            other = headers.get("Stripe-Account")
            if other and other != account.id:
                raise wrong_account(key, other)
            found = resolve(method, path)
            if found is None:
                raise StripeApiError(
                    404,
                    f"Unrecognized request URL ({method}: {path}). Please see "
                    "https://stripe.com/docs or we can help at https://support.stripe.com/.",
                )
            route, path_args = found
            if not key.allows(route.resource, route.access):
                raise permission_denied(key, route.resource, route.access)
            raw = query if method in ("GET", "DELETE") else body.decode("utf-8", "replace")
            if method == "POST" and query:
                raw = f"{query}&{raw}" if raw else query
            params = Params(parse_form(raw))
            expand = expand_paths(params)
            check_expand(route.result, expand, key if key.restricted else None)
            idem_key = headers.get("Idempotency-Key") if method == "POST" else None
            if idem_key is not None:
                base["Idempotency-Key"] = idem_key
                check_key(idem_key)
        except StripeApiError as err:
            livemode = key.livemode if key is not None else False
            return self._error(err, base, livemode=livemode)
        return _Request(method, path, key, route, path_args, params, expand, idem_key, base)

    def _idempotent(self, req: _Request, plan: Plan) -> Response:
        """Claim the key, replay a saved answer, or run and save the answer."""
        assert req.idem_key is not None
        scope = (req.key.account_id, req.key.livemode)
        try:
            outcome, record = self.idempotency.begin(
                scope,
                req.idem_key,
                method=req.method,
                path=req.path,
                fingerprint=req.params.fingerprint(),
                now=self.core.clock.now(),
                request_id=req.request_id,
            )
        except StripeApiError as err:
            return self._error(err, req.base, livemode=req.key.livemode)
        if outcome is Outcome.REPLAY:
            return self._replay(
                record.status, record.body, record.headers, record.request_id, req.base, plan
            )
        try:
            response, executed = self._execute(req, plan)
        except BaseException:
            self.idempotency.abandon(scope, req.idem_key)
            raise
        if not executed:  # validation failure: nothing ran, so nothing is saved
            self.idempotency.abandon(scope, req.idem_key)
            return response
        saved_headers = {k: v for k, v in response.headers.items() if k == "Stripe-Should-Retry"}
        self.idempotency.finish(
            scope, req.idem_key, status=response.status, body=response.body, headers=saved_headers
        )
        response.headers["Original-Request"] = req.request_id
        return self._finish(response, plan)

    def _finish(self, response: Response, plan: Plan) -> Response:
        """Apply after-commit faults to a response that is already committed (and saved)."""
        self._pause(plan.delay_after_ms)
        if plan.drop_after:
            return Response(drop=True)
        return response

    def _execute(self, req: _Request, plan: Plan) -> tuple[Response, bool]:
        """Run the handler; the flag says whether it got past validation (saveable)."""
        self.faults.wait_at_holds(plan)
        self._pause(plan.delay_before_ms)
        self._run_due()
        store = self.core.store
        key, base = req.key, req.base
        with store.lock:
            ctx = Ctx(
                core=self.core,
                account=store.accounts[key.account_id],
                space=store.space(key.account_id, key.livemode),
                key=key,
                request_id=req.request_id,
                idempotency_key=req.idem_key,
            )
            try:
                result = req.route.handler(ctx, req.params, **req.path_args)
                result = apply_expand(ctx, result, req.expand)
                response = Response(200, encode(result), dict(base))
            except StripeApiError as err:
                if not err.saved_for_idempotency:
                    return self._error(err, base, livemode=key.livemode), False
                response = self._error(err, base, livemode=key.livemode)
            except Exception:
                log.exception("stripe sandbox handler failed: %s %s", req.method, req.path)
                response = self._error(api_error(should_retry=False), base, livemode=key.livemode)
            if req.method != "GET":
                store.dirty = True
        if plan.error_after:
            response = self._error(api_error(should_retry=False), base, livemode=key.livemode)
        return response, True

    def _replay(
        self,
        status: int,
        body: bytes,
        saved_headers: Mapping[str, str],
        original_request: str,
        base: dict[str, str],
        plan: Plan,
    ) -> Response:
        self._pause(plan.delay_before_ms + plan.delay_after_ms)
        if plan.drop_after:
            return Response(drop=True)
        headers = {
            **base,
            **saved_headers,
            "Idempotent-Replayed": "true",
            "Original-Request": original_request,
        }
        if plan.error_after:
            err = api_error(should_retry=False)
            return Response(500, encode(err.body()), {**base, "Stripe-Should-Retry": "false"})
        return Response(status, body, headers, replayed=True)
