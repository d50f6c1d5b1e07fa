"""The demo's embedded Redis stops last: on the process manager's stop signal it waits
for its clients (the worker finishing a job, the web app) before shutting down."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

REPO = Path(__file__).resolve().parents[2]


def _poll(predicate: Callable[[], object], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    # A short path: unix socket paths are limited to about 100 bytes.
    socket = (
        Path(tempfile.gettempdir()) / f"caseward-redis-{os.getpid()}-{tmp_path.name[-12:]}.sock"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "app.embedded_redis", str(socket)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        start_new_session=True,  # as honcho starts it: the stop signal goes to its group
    )
    _poll(lambda: redis.Redis(unix_socket_path=str(socket)).ping(), "the server to answer")
    yield process, socket
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_redis_serves_its_clients_until_they_leave(
    server: tuple[subprocess.Popen[bytes], Path], stop: signal.Signals
) -> None:
    process, socket = server
    client = redis.Redis(unix_socket_path=str(socket), single_connection_client=True)
    client.set("job", "in progress")

    os.killpg(process.pid, stop)
    # The stopping process connects to count the clients still there: it is waiting.
    _poll(lambda: len(client.client_list()) == 2, "the server to wait for its clients")
    assert client.get("job") == b"in progress"
    assert process.poll() is None

    client.close()
    assert process.wait(timeout=20) == 0
    assert not socket.exists()


def test_redis_stops_even_if_a_client_never_leaves(
    server: tuple[subprocess.Popen[bytes], Path],
) -> None:
    process, socket = server
    client = redis.Redis(unix_socket_path=str(socket), single_connection_client=True)
    client.ping()

    os.killpg(process.pid, signal.SIGTERM)

    assert process.wait(timeout=20) == 0
    with pytest.raises(redis.ConnectionError):
        client.ping()
