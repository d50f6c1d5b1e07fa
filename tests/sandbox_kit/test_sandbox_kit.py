"""The provider-neutral sandbox kit on its own: time, faults and holds, the request log,
due work, webhook delivery, control routes, and a server that hangs up on purpose."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from integrations.sandbox_kit import (
    Clock,
    ControlRouter,
    DueWork,
    Fault,
    FaultBoard,
    Outbox,
    RequestLog,
    Response,
    Schedule,
    Serving,
    fault_from_json,
)


def _wait_until(condition: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return bool(condition())


def test_a_frozen_clock_moves_only_when_advanced_and_never_back() -> None:
    clock = Clock(start=1_000.0)
    assert clock.now() == 1_000.0 and clock.frozen
    assert clock.advance(2.5) == 1_002.5 == clock.now()
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(-1)
    follows = Clock(start=1_000.0, frozen=False)
    follows.advance(60)
    assert 1_060.0 <= follows.now() < 1_070.0


def test_an_armed_fault_matches_its_filters_and_is_used_up() -> None:
    board = FaultBoard()
    board.arm(
        Fault(
            kind="drop_after_commit",
            path="/admin/api/*/graphql.json",
            idempotency_key="caseward-action-*",
            account="shop.myshopify.com",
            operation="refundCreate",
        )
    )
    path = "/admin/api/2026-04/graphql.json"

    def plan(key: str | None, account: str, operations: tuple[str, ...]) -> Any:
        return board.plan_for("POST", path, key, account, None, operations)

    assert not plan("caseward-action-1", "shop.myshopify.com", ("Order", "order")).drop_after
    assert not plan("other-key", "shop.myshopify.com", ("refundCreate",)).drop_after
    assert not plan("caseward-action-1", "else.myshopify.com", ("refundCreate",)).drop_after
    assert plan("caseward-action-1", "shop.myshopify.com", ("R", "refundCreate")).drop_after
    assert board.armed() == []  # count 1: used up
    assert not plan("caseward-action-1", "shop.myshopify.com", ("refundCreate",)).drop_after


def test_the_per_request_header_asks_for_faults_but_never_for_a_hold() -> None:
    board = FaultBoard()
    plan = board.plan_for("POST", "/x", None, None, "delay;ms=5, error_500_after_commit")
    assert plan.delay_before_ms == 5 and plan.error_after
    with pytest.raises(ValueError, match="armed"):
        board.plan_for("POST", "/x", None, None, "hold")
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault(kind="explode")


def test_a_hold_keeps_requests_until_released() -> None:
    board = FaultBoard()
    hold = board.arm(Fault(kind="hold"))
    plan = board.plan_for("POST", "/x", None, None, None)
    passed = threading.Event()
    waiter = threading.Thread(target=lambda: (board.wait_at_holds(plan), passed.set()))
    waiter.start()
    assert _wait_until(lambda: board.holds()[0].waiting == 1)
    assert not passed.is_set()

    assert board.release(hold.id) == [hold.id]
    waiter.join(timeout=5)
    assert passed.is_set()
    (state,) = board.holds()
    assert (state.caught, state.waiting, state.released) == (1, 0, True)


def test_the_request_log_records_arrival_then_answer() -> None:
    log = RequestLog(capacity=2)
    first = log.arrived("post", "/a?x=1", "acct", "key-1", "RefundCreate")
    log.answered(first, Response(200, replayed=True))
    second = log.arrived("POST", "/b", "other", None)
    log.answered(second, Response(drop=True))
    log.arrived("POST", "/c", "acct", None)

    entries = log.entries()
    assert [e.path for e in entries] == ["/b", "/c"]  # capacity 2: the oldest forgotten
    assert (entries[0].dropped, entries[0].status) == (True, None)
    assert log.entries("acct")[0].status is None  # still being served
    assert first.to_json()["operation"] == "RefundCreate" and first.replayed


def test_due_work_runs_when_its_time_comes_including_work_it_schedules() -> None:
    work: DueWork[list[str]] = DueWork()
    schedule = Schedule()

    @work.task("first")
    def first(done: list[str], item: dict[str, Any]) -> None:
        done.append(f"first:{item['id']}")
        schedule.add(item["due"], "second", id=item["id"])

    @work.task("second")
    def second(done: list[str], item: dict[str, Any]) -> None:
        done.append(f"second:{item['id']}")

    swept: list[int] = []
    work.sweep(lambda done: swept.append(len(done)))
    done: list[str] = []
    schedule.add(10.0, "first", id="a")
    assert work.run(done, schedule, 9.0) == 0
    assert work.run(done, schedule, 10.0) == 2
    assert done == ["first:a", "second:a"]
    assert swept == [0, 0] and schedule.items == []


def test_the_outbox_retries_failures_and_honours_pause_and_discard() -> None:
    results = iter([False, False, True])
    sent: list[tuple[str, int, bool]] = []

    def send(target: dict[str, Any], attempt: int, manual: bool) -> dict[str, Any]:
        sent.append((target["event"], attempt, manual))
        ok = True if manual else next(results)
        return {**target, "attempt": attempt, "ok": ok}

    outbox = Outbox(send, retry_delays=(0.01, 0.01), thread_name="test-outbox")
    outbox.start()
    try:
        outbox.put({"event": "e1"})
        assert _wait_until(lambda: len(outbox.attempts()) == 3 and outbox.idle())
        assert [s[1] for s in sent] == [1, 2, 3]

        outbox.pause()
        outbox.put({"event": "e2"})
        outbox.put({"event": "e3"})
        assert outbox.wait_idle(1.0)  # paused: nothing runnable
        assert [p["event"] for p in outbox.pending()] == ["e2", "e3"]
        assert outbox.discard(lambda target: target["event"] == "e2") == 1
        assert outbox.send_now({"event": "e9"})["ok"]
        outbox.resume()
        assert _wait_until(lambda: ("e3", 1, False) in sent and outbox.idle())
        assert ("e2", 1, False) not in sent and ("e9", 1, True) in sent
    finally:
        outbox.stop()


def test_control_routes_need_the_token_and_answer_json_errors() -> None:
    router = ControlRouter(lambda: "secret-token")
    router.add("POST", "/_sandbox/things/{name}", lambda body, path: {"name": path["name"], **body})
    router.add("POST", "/_sandbox/faults", lambda body, path: fault_from_json(body).to_json())
    authorized = {"Authorization": "Bearer secret-token"}

    refused = router.handle("POST", "/_sandbox/things/a", {}, b"{}")
    assert refused.status == 401
    ok = router.handle("POST", "/_sandbox/things/a", authorized, b'{"x": 1}')
    assert (ok.status, json.loads(ok.body)) == (200, {"name": "a", "x": 1})
    assert router.handle("GET", "/_sandbox/things/a", authorized, b"").status == 404
    assert router.handle("POST", "/_sandbox/things/a", authorized, b"[]").status == 400
    unknown = router.handle("POST", "/_sandbox/faults", authorized, b'{"kind": "delay", "x": 1}')
    assert (
        unknown.status == 400
        and "unknown fault fields" in json.loads(unknown.body)["error"]["message"]
    )
    armed = router.handle(
        "POST", "/_sandbox/faults", authorized, b'{"kind": "delay", "operation": "refundCreate"}'
    )
    assert json.loads(armed.body)["operation"] == "refundCreate"


@pytest.fixture
def serving() -> Iterator[tuple[str, list[int]]]:
    ticks: list[int] = []

    def api(method: str, target: str, headers: dict[str, str], body: bytes) -> Response:
        if target == "/drop":
            return Response(drop=True)
        if target == "/boom":
            raise RuntimeError("a sandbox bug")
        return Response(200, f"{method} {headers.get('X-Shopify-Access-Token')}".encode())

    def control(method: str, target: str, headers: dict[str, str], body: bytes) -> Response:
        return Response(200, b"control")

    server = Serving(
        name="test-sandbox",
        api=api,
        control=control,
        failure=lambda: Response(500, b"provider error"),
        tick=lambda: ticks.append(1),
        interval=0.01,
    )
    host, port = server.start("127.0.0.1", 0)
    try:
        yield f"http://{host}:{port}", ticks
    finally:
        server.stop()
    assert server.url is None


def test_the_server_dispatches_hangs_up_and_answers_failures_in_the_providers_words(
    serving: tuple[str, list[int]],
) -> None:
    url, ticks = serving
    answer = httpx.post(f"{url}/api", headers={"x-shopify-access-token": "t"})
    assert answer.text == "POST t"  # header names arrive in one spelling
    assert httpx.get(f"{url}/_sandbox/health").text == "control"
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(f"{url}/drop")
    failed = httpx.get(f"{url}/boom")
    assert (failed.status_code, failed.text) == (500, "provider error")
    assert _wait_until(lambda: len(ticks) >= 2)
