"""Settings come from the environment in one place; the CLI migrates a fresh database."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import create_app
from app.crypto import secret_box
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


PRODUCTION = {
    "CASEWARD_ENV": "production",
    "SECRET_KEY": "a-long-random-secret",
    "CASEWARD_ENCRYPTION_KEYS": "Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyMTI=",
    "CASEWARD_AUDIT_KEYS": "k1:an-audit-secret",
    "DATABASE_URL": "postgresql://caseward@db.internal:5432/caseward",
    "REDIS_URL": "redis://redis.internal:6379/0",
    "SHOPIFY_API_KEY": "caseward-client-id",
    "SHOPIFY_API_SECRET": "a-shopify-app-secret",
}


def test_production_with_everything_configured_starts() -> None:
    settings = Settings.from_env(PRODUCTION)

    assert settings.is_production
    assert settings.check_production() == []
    settings.require_production_secrets()


@pytest.mark.parametrize(
    "variable",
    [
        "SECRET_KEY",
        "CASEWARD_ENCRYPTION_KEYS",
        "CASEWARD_AUDIT_KEYS",
        "DATABASE_URL",
        "REDIS_URL",
        "SHOPIFY_API_KEY",
        "SHOPIFY_API_SECRET",
    ],
)
def test_production_refuses_to_start_without_each_variable_and_names_it(
    variable: str, tmp_path: Path
) -> None:
    environ = {**PRODUCTION, "CASEWARD_INSTANCE_PATH": str(tmp_path / "instance")}
    del environ[variable]

    with pytest.raises(SettingsError, match=variable) as refused:
        create_app(Settings.from_env(environ))

    others = set(PRODUCTION) - {variable, "CASEWARD_ENV"}
    assert not [other for other in others if other in str(refused.value)]
    # Refused before anything was generated in place of the missing secret.
    assert not (tmp_path / "instance").exists()


def test_production_names_every_missing_variable_in_one_message() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"CASEWARD_ENV": "production"}).require_production_secrets()

    message = str(refused.value)
    for variable in set(PRODUCTION) - {"CASEWARD_ENV"}:
        assert variable in message


def test_production_refuses_an_sqlite_database() -> None:
    environ = {**PRODUCTION, "DATABASE_URL": "sqlite:////var/lib/caseward.db"}

    with pytest.raises(SettingsError, match="DATABASE_URL"):
        Settings.from_env(environ).require_production_secrets()


def test_production_never_generates_an_encryption_key(tmp_path: Path) -> None:
    """The worker and sweeper build their box without the app: it refuses there too."""
    environ = {**PRODUCTION, "CASEWARD_INSTANCE_PATH": str(tmp_path)}
    del environ["CASEWARD_ENCRYPTION_KEYS"]

    with pytest.raises(SettingsError, match="CASEWARD_ENCRYPTION_KEYS"):
        secret_box(Settings.from_env(environ))
    assert not (tmp_path / "encryption_key").exists()


def test_outside_production_the_secrets_are_generated(tmp_path: Path) -> None:
    settings = Settings.from_env({"CASEWARD_INSTANCE_PATH": str(tmp_path)})

    settings.require_production_secrets()
    assert settings.check_production()  # what production would still need
