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

# Far fewer objects than either process loads (the web app about 350,000, the worker about
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


@pytest.mark.parametrize("program", [_WEB_PROCESS, _WORKER_PROCESS], ids=["web", "worker"])
def test_a_process_keeps_the_loaded_app_out_of_full_collections(
    program: str, settings: Settings
) -> None:
    counts = _run(program, settings)
    assert counts["frozen"] > LOADED
    assert counts["in_sight"] < counts["frozen"] / 10


def _run(program: str, settings: Settings) -> dict[str, int]:
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
    counts: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return counts
