"""Several sweepers, one sweep at a time and one per interval (app/jobs/sweeper.py).

A deployment may run a sweeper on every machine, or a standby: they take turns through a
lock on the shared Redis. Here, against that Redis:

* a second sweeper gets no turn while the first holds it, nor before the interval since the
  first sweep began has passed; after it, it does;
* a sweeper that died holding its turn (it never gave it back) loses it after the time
  limit, and another sweeps;
* four sweepers looping at once in threads never sweep at the same time, and sweep no more
  often than the interval allows;
* the sweeper's health check fails before its loop has turned and before any sweep ended,
  and passes after one; the worker's fails with no worker of this machine listening.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from itertools import pairwise

import pytest
from redis import Redis
from sqlalchemy.orm import sessionmaker

from app.clock import utcnow
from app.jobs import sweeper
from app.jobs.context import WorkerContext
from app.jobs.health import sweeper_health, worker_health
from app.jobs.sweeper import Queues, Sweep, SweepReport, SweepTurns, sweep_once
from app.settings import Settings

INTERVAL = 0.4


@pytest.fixture
def settings(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Settings:
    # Redis only, and a queue of its own: the lock's keys carry the queue's name.
    return Settings(
        instance_path=tmp_path_factory.mktemp("instance"),
        redis_url=redis_url,
        queue_name=f"caseward-turns-{uuid.uuid4().hex[:6]}",
        sweep_interval_seconds=INTERVAL,
    ).completed()


@pytest.fixture
def redis(settings: Settings) -> Iterator[Redis]:
    connection = Redis.from_url(settings.redis_url)
    yield connection
    for key in connection.scan_iter(f"caseward:sweeper:{settings.queue_name}:*"):
        connection.delete(key)
    connection.close()


def wait_until(predicate: object, timeout: float = 5.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.02)


def test_a_second_sweeper_waits_for_the_turn_and_for_the_interval(
    redis: Redis, settings: Settings
) -> None:
    first, second = SweepTurns(redis, settings), SweepTurns(redis, settings)
    started = time.monotonic()
    assert first.take()
    assert not second.take()
    first.give_back(started)
    # Given back, the turn still stands until the interval since its start has passed.
    if time.monotonic() - started < INTERVAL * 0.75:
        assert not second.take()
    wait_until(second.take)
    assert time.monotonic() - started >= INTERVAL * 0.9


def test_a_turn_given_back_by_someone_else_stays_with_its_holder(
    redis: Redis, settings: Settings
) -> None:
    holder, other = SweepTurns(redis, settings), SweepTurns(redis, settings)
    assert holder.take()
    # The other's give-back (say, after its own turn expired) leaves the holder's alone.
    other.give_back(time.monotonic() - 10 * INTERVAL)
    assert redis.get(holder.lock_key) == holder.turn.local.token


def test_a_sweeper_that_died_holding_its_turn_loses_it_after_the_time_limit(
    redis: Redis, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sweeper, "SWEEP_TIME_LIMIT", 0.3)
    dead, alive = SweepTurns(redis, settings), SweepTurns(redis, settings)
    assert dead.take()
    assert not alive.take()
    wait_until(alive.take, timeout=3.0)


def test_sweepers_looping_at_once_never_overlap_nor_sweep_more_often_than_the_interval(
    redis: Redis, settings: Settings
) -> None:
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def counted(_ctx: WorkerContext, _queues: Queues) -> SweepReport:
        began = time.monotonic()
        time.sleep(0.05)  # a sweep's reads and enqueues
        with lock:
            spans.append((began, time.monotonic()))
        return {}

    ctx = WorkerContext(session_factory=sessionmaker(), settings=settings, clock=utcnow)
    queues = Queues.on(redis, settings)
    sweeps = (Sweep("counted", counted),)
    stop_at = time.monotonic() + 8 * INTERVAL

    def loop() -> None:
        turns = SweepTurns(Redis.from_url(settings.redis_url), settings)
        while time.monotonic() < stop_at:
            sweep_once(ctx, queues, sweeps, turns)
            time.sleep(0.01)  # far more often than the interval: every sweeper keeps asking

    threads = [threading.Thread(target=loop) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    spans.sort()
    assert len(spans) >= 4, spans
    for (_, ended), (began, _) in pairwise(spans):
        assert began >= ended, "two sweeps overlapped"
    starts = [began for began, _ in spans]
    gaps = [later - earlier for earlier, later in pairwise(starts)]
    # Redis's expiry is kept to the millisecond; a little slack for the clocks.
    assert min(gaps) >= INTERVAL * 0.9, gaps
    assert len(spans) <= 8 * INTERVAL / (INTERVAL * 0.9) + 1


def test_the_health_checks_read_what_the_sweeper_and_the_workers_leave_on_redis(
    redis: Redis, settings: Settings
) -> None:
    assert sweeper_health(redis, settings) == (
        f"the sweeper of {socket.gethostname()} has not turned lately"
    )
    turns = SweepTurns(redis, settings)
    turns.note_turning()
    assert sweeper_health(redis, settings) == "no sweep has ended yet"
    ctx = WorkerContext(session_factory=sessionmaker(), settings=settings, clock=utcnow)
    assert sweep_once(ctx, Queues.on(redis, settings), (), turns) == {}
    assert sweeper_health(redis, settings) is None
    # A sweep that ended long ago: sweeps are failing, or nobody holds the turn.
    redis.set(turns.swept_key, repr(time.time() - sweeper.SWEEP_TIME_LIMIT - 4 * INTERVAL))
    assert "the last sweep ended" in (sweeper_health(redis, settings) or "")

    assert worker_health(redis, settings, socket.gethostname()) == (
        f"no worker of {socket.gethostname()} listens on {settings.queue_name}"
    )
