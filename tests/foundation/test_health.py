"""The health endpoint tells an operator whether the database and Redis are usable."""

from __future__ import annotations

import socket
from pathlib import Path

from alembic.script import ScriptDirectory
from flask.testing import FlaskClient
from sqlalchemy import create_engine, text

from app import create_app
from app.migrations import MIGRATIONS_PATH, head_revision, upgrade
from app.settings import Settings


def test_health_is_ok_with_migrated_database_and_redis(client: FlaskClient) -> None:
    response = client.get("/health")

    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok"
    assert body["checks"]["database"] == {"ok": True, "revision": head_revision()}
    assert body["checks"]["redis"] == {"ok": True}


def test_health_reports_unreachable_redis_as_unavailable(settings: Settings) -> None:
    broken = Settings(**{**settings.__dict__, "redis_url": f"redis://127.0.0.1:{_closed_port()}/0"})
    client = create_app(broken).test_client()

    response = client.get("/health")

    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable"
    assert body["checks"]["redis"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True


def test_health_reports_unmigrated_database(settings: Settings, tmp_path: Path) -> None:
    fresh = Settings(**{**settings.__dict__, "database_url": f"sqlite:///{tmp_path / 'empty.db'}"})
    client = create_app(fresh).test_client()

    response = client.get("/health")

    assert response.status_code == 503
    database = response.get_json()["checks"]["database"]
    assert database == {
        "ok": False,
        "error": "schema_not_migrated",
        "revision": None,
        "head": head_revision(),
    }


def _stamped(settings: Settings, tmp_path: Path, revision: str) -> FlaskClient:
    """The app on a migrated database whose recorded revision is then set to ``revision``."""
    url = f"sqlite:///{tmp_path / 'stamped.db'}"
    upgrade(url)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": revision})
    engine.dispose()
    return create_app(Settings(**{**settings.__dict__, "database_url": url})).test_client()


def test_health_stays_ok_on_a_database_a_newer_release_migrated(
    settings: Settings, tmp_path: Path
) -> None:
    # A deploy migrates first: the running release keeps serving until the new one is up.
    client = _stamped(settings, tmp_path, "9999_a_newer_releases_revision")

    response = client.get("/health")

    assert response.status_code == 200
    assert response.get_json()["checks"]["database"] == {
        "ok": True,
        "revision": "9999_a_newer_releases_revision",
        "head": head_revision(),
        "schema": "ahead",
    }


def test_health_reports_a_database_behind_this_release(settings: Settings, tmp_path: Path) -> None:
    head = ScriptDirectory(str(MIGRATIONS_PATH)).get_revision(head_revision())
    assert head is not None and isinstance(head.down_revision, str)
    client = _stamped(settings, tmp_path, head.down_revision)

    response = client.get("/health")

    assert response.status_code == 503
    assert response.get_json()["checks"]["database"]["error"] == "schema_not_migrated"


def test_unknown_route_answers_json_not_html(client: FlaskClient) -> None:
    response = client.get("/no-such-page")

    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "not_found"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
