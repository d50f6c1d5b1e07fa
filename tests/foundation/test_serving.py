"""What the long-running processes do once they have loaded the app, before their first
request or job: they keep what they loaded out of the garbage collector's full
collections. Those collections are rare, but one walking everything a web process loads
(some 350,000 objects) took about 0.2 s here, holding up every request the process was
serving: the slowest webhook acknowledgement of the bench fell from 228-259 ms to 35-51 ms
once it stopped.

Each process is started afresh, as production starts it, so what it counts is its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.settings import Settings

REPO = Path(__file__).resolve().parents[2]

# Far fewer objects than either process loads (the web app about 225,000, the worker about
# 145,000), far more than an interpreter holds before (about 8,000; 18,000 with gunicorn).
LOADED = 60_000

# A gunicorn web process: gunicorn's own command line, config loading and app loading,
# then the hook it calls once the process has loaded the app.
_WEB_PROCESS = """
import gc, json, sys
from gunicorn.app.wsgiapp import WSGIApplication

sys.argv = ["gunicorn", "--config", "python:app.gunicorn_conf", "app:create_app()"]
server = WSGIApplication()
server.wsgi()
server.cfg.post_worker_init(None)
print(json.dumps({"frozen": gc.get_freeze_count(), "in_sight": len(gc.get_objects())}))
"""

# A worker as ``rq worker -w app.background.CasewardWorker`` makes it.
_WORKER_PROCESS = """
import gc, json
from redis import Redis
from app.background import CasewardWorker
from app.settings import Settings

CasewardWorker(["caseward-serving-test"], connection=Redis.from_url(Settings.from_env().redis_url))
print(json.dumps({"frozen": gc.get_freeze_count(), "in_sight": len(gc.get_objects())}))
"""


# A gunicorn web process once its MCP door is built (on the first agent's call), as a
# request's error is logged in it.
_WEB_PROCESS_LOGGING = """
import sys
from gunicorn.app.wsgiapp import WSGIApplication
from app.agents.mcp_server import build_server, context_from_settings
from app.settings import Settings

sys.argv = ["gunicorn", "--config", "python:app.gunicorn_conf", "app:create_app()"]
app = WSGIApplication().wsgi()
build_server(context_from_settings(Settings.from_env()))
try:
    raise KeyError("created_at")
except KeyError:
    app.logger.exception("Exception on /webhooks/shopify [POST]")
"""


@pytest.mark.parametrize("program", [_WEB_PROCESS, _WORKER_PROCESS], ids=["web", "worker"])
def test_a_process_keeps_the_loaded_app_out_of_full_collections(
    program: str, settings: Settings
) -> None:
    counts = _run(program, settings)
    assert counts["frozen"] > LOADED
    assert counts["in_sight"] < counts["frozen"] / 10


def test_a_web_process_logs_an_error_as_plain_lines_with_its_traceback(
    settings: Settings,
) -> None:
    """Not in the boxes of 80 columns the MCP SDK would set up, where no log collector
    finds the exception's own line."""
    logged = _completed(_WEB_PROCESS_LOGGING, settings).stderr.splitlines()
    record = next(line for line in logged if "Exception on /webhooks/shopify" in line)
    assert record.endswith("[ERROR] app: Exception on /webhooks/shopify [POST]"), record
    following = logged[logged.index(record) + 1 :]
    assert following[0] == "Traceback (most recent call last):", following
    assert "KeyError: 'created_at'" in following
    assert not any("\u256d" in line or "\u2502" in line for line in logged)  # box edges


def _run(program: str, settings: Settings) -> dict[str, int]:
    done = _completed(program, settings)
    counts: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return counts


def _completed(program: str, settings: Settings) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": settings.secret_key,
        "CASEWARD_INSTANCE_PATH": str(settings.instance_path),
        "CASEWARD_ENCRYPTION_KEYS": ",".join(settings.encryption_keys),
    }
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done
