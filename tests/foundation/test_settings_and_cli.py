"""Settings come from the environment in one place; the CLI migrates a fresh database."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import create_app
from app.migrations import head_revision
from app.settings import Settings, SettingsError


def test_settings_default_to_embedded_database_and_redis(tmp_path: Path) -> None:
    settings = Settings.from_env({"CASEWARD_INSTANCE_PATH": str(tmp_path)})

    assert settings.database_url == f"sqlite:///{tmp_path.resolve() / 'caseward.db'}"
    assert settings.uses_embedded_redis
    assert settings.embedded_redis_path == tmp_path / "redis.db"


def test_postgres_urls_use_the_psycopg3_driver() -> None:
    settings = Settings.from_env({"DATABASE_URL": "postgres://u@127.0.0.1:5432/shop"})

    assert settings.database_url == "postgresql+psycopg://u@127.0.0.1:5432/shop"


def test_malformed_boolean_names_the_variable() -> None:
    with pytest.raises(SettingsError, match="CASEWARD_TESTING"):
        Settings.from_env({"CASEWARD_TESTING": "maybe"})


def test_unknown_override_is_refused() -> None:
    with pytest.raises(SettingsError, match="colour"):
        Settings.from_env({}, colour="blue")


def test_fresh_install_runs_on_sqlite_and_embedded_redis(tmp_path: Path) -> None:
    """What a merchant gets with nothing configured: migrate, then a healthy app."""
    app = create_app(Settings.from_env({"CASEWARD_INSTANCE_PATH": str(tmp_path)}))

    result = app.test_cli_runner().invoke(args=["db-upgrade"])
    assert result.exit_code == 0, result.output
    assert f"database at {head_revision()}" in result.output
    # Migrating needs no queue: the embedded Redis starts only when something uses it.
    assert app.extensions["caseward.redis"] is None

    response = app.test_client().get("/health")
    assert response.status_code == 200, response.get_json()
    assert (tmp_path / "caseward.db").exists()
    assert (tmp_path / "secret_key").read_text() == app.config["SECRET_KEY"]
