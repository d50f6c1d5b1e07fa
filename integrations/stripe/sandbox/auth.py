"""Accounts and API keys: secret keys, restricted keys and what each may touch.

Caseward runs on restricted keys (``rk_``) with per-resource None/Read/Write, and a
missing permission must look exactly like Stripe's 403 so the product can tell the
merchant which permission to add. Each account has a test mode and, optionally, a live
mode; the mode of the key decides which data the request sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import StripeApiError
from .ids import new_id, random_base62

DEFAULT_API_VERSION = "2026-07-29.dahlia"

# Resource group -> Stripe's permission stem (``rak_<stem>_read`` / ``rak_<stem>_write``).
RESOURCES: dict[str, str] = {
    "charges": "charge",
    "payment_intents": "payment_intent",
    "payment_methods": "payment_method",
    "refunds": "refund",
    "customers": "customer",
    "coupons": "coupon",
    "promotion_codes": "promotion_code",
    "subscriptions": "subscription",
    "prices": "plan",
    "products": "product",
    "disputes": "dispute",
    "events": "event",
    "webhook_endpoints": "webhook",
}
ACCESS_LEVELS = ("none", "read", "write")


def mask_key(key: str) -> str:
    """Stripe's way of echoing a key in errors: prefix, stars, last four characters."""
    parts = key.split("_")
    prefix = "_".join(parts[:2]) + "_" if len(parts) >= 3 else ""
    tail = key[-4:] if len(key) > len(prefix) + 4 else ""
    hidden = len(key) - len(prefix) - len(tail)
    return prefix + "*" * min(max(hidden, 4), 24) + tail


@dataclass
class ApiKey:
    """One API key and the account/mode it opens."""

    secret: str
    account_id: str
    livemode: bool
    restricted: bool = False
    permissions: dict[str, str] = field(default_factory=dict)
    name: str | None = None

    def allows(self, resource: str, access: str) -> bool:
        """Whether this key may ``access`` ("read"/"write") the resource group."""
        if not self.restricted:
            return True
        granted = self.permissions.get(resource, "none")
        if access == "read":
            return granted in ("read", "write")
        return granted == "write"

    def to_json(self) -> dict[str, Any]:
        """Snapshot and control-endpoint form."""
        return {
            "key": self.secret,
            "account": self.account_id,
            "livemode": self.livemode,
            "restricted": self.restricted,
            "permissions": dict(self.permissions),
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApiKey:
        """Inverse of :meth:`to_json`."""
        return cls(
            secret=str(data["key"]),
            account_id=str(data["account"]),
            livemode=bool(data["livemode"]),
            restricted=bool(data["restricted"]),
            permissions={str(k): str(v) for k, v in dict(data.get("permissions") or {}).items()},
            name=data.get("name"),
        )


@dataclass
class Account:
    """A Stripe account: an id, an API version, and whether it has a live mode."""

    id: str
    api_version: str = DEFAULT_API_VERSION
    live_enabled: bool = False

    def to_json(self) -> dict[str, Any]:
        """Snapshot form."""
        return {"id": self.id, "api_version": self.api_version, "live_enabled": self.live_enabled}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Account:
        """Inverse of :meth:`to_json`."""
        return cls(
            id=str(data["id"]),
            api_version=str(data.get("api_version") or DEFAULT_API_VERSION),
            live_enabled=bool(data.get("live_enabled")),
        )


def normalize_permissions(permissions: Mapping[str, str] | None) -> dict[str, str]:
    """Validate a restricted key's permission map (resource group -> none/read/write).

    Accepts the group names above (``refunds``) or Stripe's stems (``refund``)."""
    by_stem = {stem: group for group, stem in RESOURCES.items()}
    result: dict[str, str] = {}
    for name, level in (permissions or {}).items():
        group = name if name in RESOURCES else by_stem.get(name)
        if group is None:
            raise ValueError(f"unknown resource {name!r}; expected one of {sorted(RESOURCES)}")
        if level not in ACCESS_LEVELS:
            raise ValueError(f"access for {name!r} must be one of {ACCESS_LEVELS}, not {level!r}")
        result[group] = level
    return result


def make_key(
    account_id: str,
    *,
    livemode: bool,
    restricted: bool,
    permissions: Mapping[str, str] | None = None,
    name: str | None = None,
    secret: str | None = None,
) -> ApiKey:
    """Mint a key: ``sk_test_51...``/``rk_live_51...`` with random body unless given."""
    kind = "rk" if restricted else "sk"
    mode = "live" if livemode else "test"
    value = secret or f"{kind}_{mode}_51{random_base62(97)}"
    expected = f"{kind}_{mode}_"
    if not value.startswith(expected):
        raise ValueError(
            f"a {'restricted' if restricted else 'secret'} {mode} key starts with {expected}"
        )
    return ApiKey(
        secret=value,
        account_id=account_id,
        livemode=livemode,
        restricted=restricted,
        permissions=normalize_permissions(permissions) if restricted else {},
        name=name,
    )


def new_account_id() -> str:
    """``acct_1...`` like Stripe's account ids."""
    return new_id("acct", 16)


def unauthorized(presented: str | None) -> StripeApiError:
    """401 for a missing or unknown key, echoing the key masked like Stripe does."""
    if not presented:
        return StripeApiError(
            401,
            "You did not provide an API key. You need to provide your API key in the "
            "Authorization header, using Bearer auth (e.g. 'Authorization: Bearer "
            "YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, "
            "or we can help at https://support.stripe.com/.",
            should_retry=False,
        )
    return StripeApiError(
        401, f"Invalid API Key provided: {mask_key(presented)}", should_retry=False
    )


def permission_denied(key: ApiKey, resource: str, access: str) -> StripeApiError:
    """403 naming the permission that would let a restricted key continue."""
    permission = f"rak_{RESOURCES[resource]}_{access}"
    return StripeApiError(
        403,
        f"The provided key '{mask_key(key.secret)}' does not have the required permissions "
        f"for this endpoint on account '{key.account_id}'. Having the '{permission}' "
        "permission would allow this request to continue.",
        code="more_permissions_required",
        should_retry=False,
    )


def wrong_account(key: ApiKey, account: str) -> StripeApiError:
    """403 when a ``Stripe-Account`` header names an account this key cannot reach."""
    return StripeApiError(
        403,
        f"The provided key '{mask_key(key.secret)}' does not have access to account "
        f"'{account}' (or that account does not exist). Application access may have been "
        "revoked.",
        should_retry=False,
    )
