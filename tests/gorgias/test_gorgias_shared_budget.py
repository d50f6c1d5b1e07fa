"""One Gorgias account's request budget kept in Redis, shared by every process: the bucket's
arithmetic on Redis' own clock, and two processes' clients against the served sandbox on
wall time, which keep to the account's 40 requests per 20 s together."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from gorgias_support import MAYA
from redis import Redis

from integrations.gorgias import AccountBudgets, Budgets, GorgiasClient, Limit, SharedBudgets
from integrations.gorgias.budget import GORGIAS_LIMIT
from integrations.gorgias.sandbox import ApiUser, Clock, GorgiasSandbox


@pytest.fixture
def redis(redis_url: str) -> Iterator[Redis]:
    connection = Redis.from_url(redis_url)
    yield connection
    connection.close()


def _process_budgets(redis_url: str, limit: Limit = GORGIAS_LIMIT) -> SharedBudgets:
    """What one process builds: its own connection to the deployment's Redis."""
    return SharedBudgets(Redis.from_url(redis_url), limit)


def _domain() -> str:
    return f"shop-{uuid.uuid4().hex[:12]}.gorgias.com"


def _about(wait: float, expected: float, *, since: float, rate: float) -> bool:
    """``wait`` is ``expected`` less what the bucket refilled (``rate`` a second) in the
    wall time since ``since``: the requests before it took some time of their own."""
    refilled = (time.monotonic() - since) * rate
    return expected - refilled - 0.005 <= wait <= expected + 0.005


def test_two_processes_draw_on_one_bucket_and_wait_in_line(redis_url: str) -> None:
    domain = _domain()
    first, second = (_process_budgets(redis_url).for_account(domain) for _ in range(2))
    started = time.monotonic()
    # Gorgias' 40 less the one kept as headroom.
    waits = [(first if n % 2 else second).reserve(0.0) for n in range(39)]
    assert waits == [0.0] * 39
    # The 40th waits for the next token (two a second), the 41st for the one after it.
    assert _about(first.reserve(0.0), 0.5, since=started, rate=2.0)
    assert _about(second.reserve(0.0), 1.0, since=started, rate=2.0)


def test_a_429_seen_by_one_process_holds_every_process(redis_url: str) -> None:
    domain = _domain()
    refused, other = (_process_budgets(redis_url).for_account(domain) for _ in range(2))
    started = time.monotonic()
    refused.hold(0.0, 3.0)
    assert _about(other.reserve(0.0), 3.0, since=started, rate=2.0)


def test_a_bucket_refills_on_redis_time_and_is_forgotten_once_full(
    redis: Redis, redis_url: str
) -> None:
    domain = _domain()
    # Two requests of three usable, refilled at ten a second.
    bucket = _process_budgets(redis_url, Limit(capacity=3, window_s=0.3)).for_account(domain)
    started = time.monotonic()
    assert [bucket.reserve(0.0) for _ in range(2)] == [0.0, 0.0]
    # The caller's clock says hours have passed; Redis' says not: a shared bucket reads
    # only Redis' (a process's clock means nothing on another machine).
    assert _about(bucket.reserve(10_000.0), 0.1, since=started, rate=10.0)
    key = f"caseward-gorgias-budget:{domain}"
    # Kept until it would be full again (0.3 s from here), and a second more.
    assert 1000 < redis.pttl(key) <= 1300
    time.sleep(0.45)
    assert [bucket.reserve(0.0) for _ in range(2)] == [0.0, 0.0]


def test_each_account_has_its_own_bucket(redis_url: str) -> None:
    budgets = _process_budgets(redis_url, Limit(capacity=2, window_s=10.0))
    assert budgets.for_account(_domain()).reserve(0.0) == 0.0
    assert budgets.for_account(_domain()).reserve(0.0) == 0.0


@pytest.fixture(scope="module")
def wall_time_sandbox() -> Iterator[GorgiasSandbox]:
    """A sandbox on wall time: its rate limit refills as Redis' clock does."""
    box = GorgiasSandbox(clock=Clock(), integration_retry_delays=(), integration_timeout=5.0)
    box.start()
    yield box
    box.stop()


@pytest.mark.parametrize(
    ("budgets_of_a_process", "refused"),
    [
        pytest.param(_process_budgets, False, id="one budget in Redis"),
        pytest.param(lambda _url: AccountBudgets(), True, id="a budget in each process"),
    ],
)
def test_two_processes_at_once_keep_to_the_accounts_limit_together(
    wall_time_sandbox: GorgiasSandbox,
    redis_url: str,
    budgets_of_a_process: Callable[[str], Budgets],
    refused: bool,
) -> None:
    sandbox = wall_time_sandbox
    assert sandbox.url is not None
    name = f"busy-{uuid.uuid4().hex[:12]}"
    domain = sandbox.create_account(name, api_users=[ApiUser("me@shop.example", "key")])
    ticket_id = sandbox.open_ticket(domain, customer_email=MAYA, subject="Hi", body_text="Hi")
    clients = [
        GorgiasClient(
            f"https://{domain}",
            "me@shop.example",
            "key",
            timeout_s=5.0,
            api_base=sandbox.url,
            budgets=budgets_of_a_process(redis_url),
        )
        for _ in range(2)
    ]

    def read_the_ticket(client: GorgiasClient) -> None:
        for _ in range(23):
            client.ticket(ticket_id)

    # 46 reads at once: six more than the account's 40 in 20 s.
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(read_the_ticket, clients))
    statuses = [request.status for request in sandbox.received_requests(domain)]
    assert statuses.count(200) == 46
    # Together through one budget they wait their turn; each with its own, Gorgias refuses.
    assert (429 in statuses) is refused
