"""The container image's commands and health checks, run as the Dockerfile states them.

No image is built here: the stages' ``CMD`` and ``HEALTHCHECK`` lines are read from the
Dockerfile and run as processes from the source tree (the image's working directory), with
the image's own ``ENV`` and a production environment, against PostgreSQL and Redis. So the
Dockerfile cannot drift from commands that work:

* ``migrate`` brings an empty database to the head revision, and again changes nothing;
* ``web``, ``worker`` and ``sweeper`` each fail their health check before they start, pass
  it once they run, and leave within seconds of the stop signal the image names;
* every path the image copies from the build context exists and is not left out of it,
  and Polaris' stylesheet is the one the Makefile's install copies.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

import psycopg
import pytest
import requests
from sqlalchemy import create_engine, make_url

from app.crypto import SecretBox
from app.migrations import current_revision, head_revision
from app.settings import normalise_database_url

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
WEB_PORT = 13310
# Set for this machine, not by the image: where the code and packages are, where the
# instance folder and the checkpoints go, where the web listens.
MACHINE_SPECIFIC = (
    "PATH",
    "PYTHONPATH",
    "CASEWARD_INSTANCE_PATH",
    "CASEWARD_AUDIT_CHECKPOINT_DIR",
    "CASEWARD_BIND",
)

pytestmark = pytest.mark.slow


# ---------------------------------------------------------------- reading the Dockerfile


@dataclass
class Stage:
    name: str
    parent: str
    env: dict[str, str] = field(default_factory=dict)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] | None = None
    health_options: dict[str, str] = field(default_factory=dict)
    stop_signal: str | None = None
    copies: list[str] = field(default_factory=list)


def instructions(text: str) -> Iterator[tuple[str, str]]:
    """Each instruction and its arguments, continuation lines joined, comments left out."""
    logical = ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") and not logical:
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        if logical.strip():
            keyword, _, rest = logical.strip().partition(" ")
            yield keyword.upper(), rest.strip()
        logical = ""


def stages() -> dict[str, Stage]:
    found: dict[str, Stage] = {}
    stage: Stage | None = None
    for keyword, rest in instructions(DOCKERFILE.read_text(encoding="utf-8")):
        if keyword == "FROM":
            parent, _, name = rest.partition(" AS ")
            stage = found[name.strip()] = Stage(name.strip(), parent.strip())
        elif stage is None:
            continue
        elif keyword == "ENV":
            stage.env.update(word.split("=", 1) for word in shlex.split(rest))
        elif keyword == "CMD":
            stage.cmd = json.loads(rest)
        elif keyword == "HEALTHCHECK":
            if rest == "NONE":
                continue
            options, _, command = rest.partition("CMD ")
            stage.health_options = dict(
                word.removeprefix("--").split("=", 1) for word in options.split()
            )
            stage.healthcheck = json.loads(command)
        elif keyword == "STOPSIGNAL":
            stage.stop_signal = rest
        elif keyword == "COPY" and not rest.startswith("--from"):
            stage.copies += json.loads(rest)[:-1] if rest.startswith("[") else rest.split()[:-1]
    return found


def lineage(name: str) -> list[Stage]:
    """The stage and those it is built FROM, the furthest first."""
    found = stages()
    chain = []
    while name in found:
        chain.insert(0, found[name])
        name = found[name].parent
    return chain


def image_env(name: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for stage in lineage(name):
        env.update(stage.env)
    return env


def image_value(name: str, attribute: str) -> object:
    """What the stage runs with: its own value, else the nearest stage's it is built from."""
    for stage in reversed(lineage(name)):
        value = getattr(stage, attribute)
        if value:
            return value
    return None


# ---------------------------------------------------------------- the stack


@pytest.fixture(scope="module")
def production_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """What a deployment gives every container: an empty database of its own, a Redis
    database, its secrets, queues of its own; with the image's ENV."""
    base_db, base_redis = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not base_db.startswith(("postgres", "postgresql")) or not base_redis:
        pytest.skip("the image's commands run in production: PostgreSQL and Redis servers")
    from redis_claim import claim_redis_database  # noqa: PLC0415

    admin = make_url(normalise_database_url(base_db))
    dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"caseward_image_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    redis_url, redis = claim_redis_database(base_redis)
    folder = tmp_path_factory.mktemp("container")
    env = {
        **image_env("web"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "CASEWARD_INSTANCE_PATH": str(folder / "instance"),
        "CASEWARD_AUDIT_CHECKPOINT_DIR": str(folder / "checkpoints"),
        "CASEWARD_BIND": f"127.0.0.1:{WEB_PORT}",
        "DATABASE_URL": admin.set(database=name).render_as_string(hide_password=False),
        "REDIS_URL": redis_url,
        "SECRET_KEY": uuid.uuid4().hex,
        "CASEWARD_ENCRYPTION_KEYS": SecretBox.generate_key(),
        "CASEWARD_AUDIT_KEYS": f"image-test:{uuid.uuid4().hex}{uuid.uuid4().hex}",
        "SHOPIFY_API_KEY": "image-test-client-id",
        "SHOPIFY_API_SECRET": uuid.uuid4().hex,
        "CASEWARD_QUEUE": f"caseward-image-{uuid.uuid4().hex[:6]}",
        "CASEWARD_BACKGROUND_QUEUE": f"caseward-image-background-{uuid.uuid4().hex[:6]}",
    }
    try:
        yield env
    finally:
        redis.flushdb()
        redis.close()
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def migrated_env(production_env: dict[str, str]) -> dict[str, str]:
    run(image_value("migrate", "cmd"), production_env)
    return production_env


def run(command: object, env: dict[str, str], timeout: float = 120) -> str:
    assert isinstance(command, list), command
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (command, done.stdout, done.stderr)
    return done.stdout


def healthy(stage: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The stage's HEALTHCHECK command, run once within its own timeout."""
    command = image_value(stage, "healthcheck")
    assert isinstance(command, list), f"{stage} states no health check"
    timeout = float(lineage(stage)[-1].health_options["timeout"].removesuffix("s"))
    # The first run of a cold interpreter on a busy machine may take longer than Docker's
    # timeout would allow; the command is what is under test here, not the machine.
    return subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout * 6,
        check=False,
    )


def wait_healthy(stage: str, env: dict[str, str], process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 90
    while True:
        check = healthy(stage, env)
        if check.returncode == 0:
            return check.stdout
        assert process.poll() is None, f"{stage} exited {process.returncode}"
        assert time.monotonic() < deadline, (stage, check.stdout, check.stderr)
        time.sleep(0.5)


def started(stage: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = image_value(stage, "cmd")
    assert isinstance(command, list)
    return subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def stop(stage: str, process: subprocess.Popen[bytes]) -> float:
    """Send the image's stop signal; seconds until the process left."""
    name = image_value(stage, "stop_signal")
    assert isinstance(name, str)
    began = time.monotonic()
    process.send_signal(getattr(signal, name))
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return time.monotonic() - began


# ---------------------------------------------------------------- the commands


def test_migrate_brings_an_empty_database_to_head_and_again_changes_nothing(
    production_env: dict[str, str],
) -> None:
    command = image_value("migrate", "cmd")
    assert command == ["flask", "--app", "app", "db-upgrade"]
    assert image_value("migrate", "healthcheck") is None
    for _ in range(2):
        assert f"database at {head_revision()}" in run(command, production_env)
    engine = create_engine(normalise_database_url(production_env["DATABASE_URL"]))
    with engine.connect() as connection:
        assert current_revision(connection) == head_revision()
    engine.dispose()


@pytest.mark.parametrize("stage", ["web", "worker", "sweeper"])
def test_each_process_passes_its_health_check_only_while_it_runs_and_stops_on_its_signal(
    stage: str, migrated_env: dict[str, str]
) -> None:
    before = healthy(stage, migrated_env)
    assert before.returncode != 0, before.stdout
    process = started(stage, migrated_env)
    try:
        said = wait_healthy(stage, migrated_env, process)
        if stage == "web":
            body = requests.get(f"http://127.0.0.1:{WEB_PORT}/health", timeout=5).json()
            assert body["status"] == "ok", body
        else:
            assert said.strip() == f"{stage}: healthy"
    finally:
        took = stop(stage, process)
    # A worker with no job in hand leaves at once; a web process within its graceful time.
    assert took < 15, took
    if stage == "worker":
        # Gone from RQ's registry, its health check fails again at once.
        assert healthy(stage, migrated_env).returncode != 0


def test_the_web_listens_where_the_image_exposes_and_checks() -> None:
    web = lineage("web")[-1]
    port = image_env("web")["CASEWARD_BIND"].rpartition(":")[2]
    assert re.search(rf"EXPOSE {port}\b", DOCKERFILE.read_text(encoding="utf-8"))
    assert "CASEWARD_BIND" in " ".join(web.healthcheck or [])
    for variable in MACHINE_SPECIFIC:
        assert variable in image_env("web"), variable


def test_what_the_image_copies_is_in_the_build_context() -> None:
    ignored = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copied = [path for stage in stages().values() for path in stage.copies]
    assert copied
    for path in copied:
        assert (REPO / path).exists(), path
        assert not any(fnmatch(path, pattern) or path == pattern for pattern in ignored), path
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    source = re.search(r"cp widget/(node_modules/\S+) app/static/polaris.css", makefile)
    assert source, "the Makefile no longer copies Polaris' stylesheet"
    assert f"cp {source.group(1)} " in DOCKERFILE.read_text(encoding="utf-8")
