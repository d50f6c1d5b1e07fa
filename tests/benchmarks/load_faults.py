"""The faults of the load benchmark (``bench_load.py``): what breaks, when, for how long.

The sequence of a faulted run, each fault at its share of the run (:func:`schedule`):

1. the Stripe sandbox answers 500 to every refund, committed first (what the key
   replays), for a window; then disarmed;
2. the Redis server the benchmark started itself is stopped (SIGTERM, its append-only
   file written), left down for a sixth of a window (5 s in a 10-minute run), and started
   again on the same port and files;
3. the Stripe sandbox answers every refund too late, past Caseward's provider timeout,
   committed first, for a window;
4. one RQ worker is killed with SIGKILL, mid-job or not, and a new one started within a
   second, as a supervisor would (as for any worker that ends: :class:`Supervisor`);
5. every PostgreSQL connection to the benchmark's own database is ended
   (``pg_terminate_backend``), the web's, the workers' and the sweeper's alike;
6. the Shopify sandbox answers 500 to everything (nothing committed), for a window;
7. the Shopify sandbox answers too late (writes committed first), for a window;
8. the Anthropic sandbox answers 529 ``overloaded_error`` to every Messages request, for a
   window; then its scripted draft again;
9. a second worker killed with SIGKILL.

A provider's breaker trips on failed and unclear sends (``app/execution/brakes.py``) and
holds the shop's actions until a person resumes: once a provider's fault is disarmed,
the shop's owner resumes, through the staff API, as the alert asks them to.

The code: :class:`OwnRedis` (the restartable server), :class:`Supervisor` (the worker
processes), :func:`end_database_connections`, :class:`ProviderFaults` (each sandbox's
control routes), and :func:`run_schedule`, which walks the schedule on the load's clock.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from bench_money_path import Sandbox, worker_process
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy import make_url

# Far more requests than a window receives: the fault lasts until it is disarmed.
UNTIL_DISARMED = 1_000_000


# ------------------------------------------------------------------ Redis


class OwnRedis:
    """A redis-server process of the benchmark's own on ``port``, its data in an
    append-only file, so that a restart loses nothing Redis had acknowledged."""

    def __init__(self, port: int, folder: Path) -> None:
        self.port = port
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        client = Redis(port=self.port, socket_timeout=1)
        while True:
            try:
                if client.ping():
                    return
            except RedisConnectionError:
                pass  # not listening yet, or still loading its file
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def restart(self, down: float) -> float:
        """Stop, stay away ``down`` seconds (a host rebooting, a failover), start again;
        returns the seconds Redis was away."""
        began = time.monotonic()
        self.stop()
        time.sleep(down)
        self.start()
        return time.monotonic() - began


@contextmanager
def own_redis(port: int) -> Iterator[OwnRedis]:
    with tempfile.TemporaryDirectory() as folder:
        server = OwnRedis(port, Path(folder))
        server.start()
        try:
            yield server
        finally:
            server.stop()


# ------------------------------------------------------------------ workers


@dataclass
class Supervisor:
    """The RQ worker processes, each started again within a second of its end, as a
    container runtime's or systemd's restart policy would: killed, or quit (RQ's worker
    quits when Redis is gone as a job ends, as in the Redis restart)."""

    env: dict[str, str]
    queues: tuple[str, ...]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    quit: list[int] = field(default_factory=list)
    stopping: bool = False

    def start(self, count: int) -> None:
        self.processes += [worker_process(self.env, *self.queues) for _ in range(count)]

    def keep_running(self, sleep: Callable[[float], None]) -> None:
        """Until :meth:`stop`: every second, a new worker for each that ended. ``sleep``
        is the load's own (gevent's)."""
        while not self.stopping:
            for ended in [p for p in self.processes if p.poll() is not None]:
                self.processes.remove(ended)
                if ended.pid not in self.killed:
                    self.quit.append(ended.pid)
                self.start(1)
            sleep(1.0)

    def kill_one(self) -> int:
        """SIGKILL the oldest living worker and its children, as a container's end kills
        them; :meth:`keep_running` starts a new one."""
        victim = next(p for p in self.processes if p.poll() is None)
        self.killed.append(victim.pid)
        for pid in (victim.pid, *_children(victim.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        victim.wait(timeout=10)
        return victim.pid

    def stop(self) -> None:
        self.stopping = True
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            # The parent is the fourth field, after the command name in parentheses.
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


# ------------------------------------------------------------------ PostgreSQL


def end_database_connections(database_url: str) -> int:
    """End every connection to the benchmark's own database but this one; returns how
    many. Another database's connections are never touched."""
    url = make_url(database_url)
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as connection:
        ended = connection.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (url.database,),
        ).fetchone()
    return int(ended[0]) if ended else 0


# ------------------------------------------------------------------ the providers


@dataclass
class ProviderFaults:
    """The sandboxes' fault controls. ``timeout_ms``: how late a "timeout" answers, past
    the provider timeout the web and workers run with."""

    stripe: Sandbox
    shopify: Sandbox
    anthropic: Sandbox
    timeout_ms: int
    restore_model: Callable[[], None]

    def stripe_errors(self) -> None:
        # Refunds only, committed before the 500: a read refused only postpones the send
        # (the action stays queued), a write whose answer is a 500 leaves it unclear.
        self.stripe.control(
            "POST",
            "/faults",
            {
                "kind": "error_500_after_commit",
                "method": "POST",
                "path": "/v1/refunds",
                "count": UNTIL_DISARMED,
            },
        )

    def stripe_timeouts(self) -> None:
        self.stripe.control(
            "POST",
            "/faults",
            {
                "kind": "delay",
                "method": "POST",
                "path": "/v1/refunds",
                "when": "after",
                "ms": self.timeout_ms,
                "count": UNTIL_DISARMED,
            },
        )

    def stripe_clear(self) -> None:
        self.stripe.control("DELETE", "/faults")

    def shopify_errors(self) -> None:
        self.shopify.control(
            "POST", "/faults", {"kind": "error_500_before_commit", "count": UNTIL_DISARMED}
        )

    def shopify_timeouts(self) -> None:
        self.shopify.control(
            "POST",
            "/faults",
            {"kind": "delay", "when": "after", "ms": self.timeout_ms, "count": UNTIL_DISARMED},
        )

    def shopify_clear(self) -> None:
        self.shopify.control("DELETE", "/faults")

    def model_overloaded(self) -> None:
        self.anthropic.control(
            "POST",
            "/answers/default",
            {"answer": {"kind": "error", "status": 529, "type": "overloaded_error"}},
        )


# ------------------------------------------------------------------ the schedule


@dataclass(frozen=True)
class Fault:
    """One fault: begun at ``at`` (a share of the run), ended ``lasting`` seconds later
    (0: a single blow, nothing to end)."""

    name: str
    at: float
    lasting: float
    begin: Callable[[], Any]
    end: Callable[[], Any] | None = None


@dataclass
class Happened:
    """What the schedule did and when, in seconds from the load's start."""

    name: str
    began: float
    ended: float
    detail: str


def schedule(
    seconds: float,
    redis: OwnRedis,
    supervisor: Supervisor,
    database_url: str,
    providers: ProviderFaults,
    resume: Callable[[], Any],
) -> list[Fault]:
    """The faults of a run of ``seconds``: windows of 30 s in a 10-minute run, a
    twentieth of the run in a shorter one."""
    window = min(30.0, seconds / 20)

    def then_resume(clear: Callable[[], None]) -> Callable[[], Any]:
        def ended() -> Any:
            clear()
            # A few seconds for the sends under way to come back, then a person resumes.
            time.sleep(3.0)
            return resume()

        return ended

    def model_back() -> None:
        providers.restore_model()

    return [
        Fault(
            "Stripe answers 500",
            0.08,
            window,
            providers.stripe_errors,
            then_resume(providers.stripe_clear),
        ),
        Fault("Redis restarted", 0.18, 0, lambda: redis.restart(down=window / 6)),
        Fault(
            "Stripe times out",
            0.27,
            window,
            providers.stripe_timeouts,
            then_resume(providers.stripe_clear),
        ),
        Fault("a worker killed (SIGKILL)", 0.38, 0, supervisor.kill_one),
        Fault(
            "PostgreSQL connections ended",
            0.47,
            0,
            lambda: end_database_connections(database_url),
        ),
        Fault(
            "Shopify answers 500",
            0.55,
            window,
            providers.shopify_errors,
            then_resume(providers.shopify_clear),
        ),
        Fault(
            "Shopify times out",
            0.64,
            window,
            providers.shopify_timeouts,
            then_resume(providers.shopify_clear),
        ),
        Fault("Messages API answers 529", 0.74, window, providers.model_overloaded, model_back),
        Fault("another worker killed (SIGKILL)", 0.84, 0, supervisor.kill_one),
    ]


def run_schedule(
    faults: list[Fault], seconds: float, started: float, sleep: Callable[[float], None]
) -> list[Happened]:
    """Cause each fault at its moment of a run that began at ``started`` (monotonic), end
    it after its window; returns what happened. ``sleep`` is the load's own (gevent's)."""
    happened = []
    for fault in sorted(faults, key=lambda f: f.at):
        wait = started + fault.at * seconds - time.monotonic()
        if wait > 0:
            sleep(wait)
        began = time.monotonic() - started
        detail = fault.begin()
        if fault.end is not None:
            sleep(fault.lasting)
            ended_detail = fault.end()
            detail = ended_detail if ended_detail is not None else detail
        ended = time.monotonic() - started
        shown = "" if detail is None else f"{detail:.1f} s" if isinstance(detail, float) else detail
        happened.append(Happened(fault.name, began, ended, str(shown)))
        print(f"  fault at {began:6.1f}-{ended:6.1f} s: {fault.name} {shown}".rstrip(), flush=True)
    return happened
