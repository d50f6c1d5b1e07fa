"""Benchmark: what more RQ workers and a second web process add, as on several machines.

    .venv/bin/python tests/benchmarks/bench_scaling.py [--actions 150] [--slow-actions 48]

The Stripe sandbox runs as its own process; the database (its own, dropped after) and Redis
(a database number claimed for the run, emptied after) come from DATABASE_URL /
REDIS_URL, as every machine of a deployment shares one PostgreSQL and one Redis. In turn:

* executed actions per second with 1, 2 and 4 RQ worker processes (``rq worker`` with
  Caseward's worker class, as ``python -m app.background worker`` runs it), each run draining
  a fresh batch of approved refunds queued at once, from the first enqueue to the database's
  own time of the last action recorded (``bench_money_path.drained``). First with the sandbox
  answering at once: every worker then spends its time on the CPU, so on a machine of two
  cores more workers can add little. Then with ``--latency`` ms added to every provider call,
  as a real provider answers: a worker spends most of an action waiting, so workers add up.
* two gunicorn web processes on ports of their own, as two machines behind a load balancer,
  with two workers: every proposal is approved through both at once (a double click landing
  on two machines), from several clients. Both serve requests; each proposal gets one
  approval and one action, and the provider one refund per action, whichever process
  answered first.

The machine's load average is printed beside each figure: it is shared, so figures move.
"""

from __future__ import annotations

import argparse
import os
import threading
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import requests
from bench_money_path import (
    Bench,
    approved,
    approver_token,
    bench_settings,
    build,
    drained,
    payments,
    proposals,
    sandbox_process,
    wait_until_settled,
    web_process,
    worker_env,
    workers,
)
from benchmarks.figures import record
from sqlalchemy import func, select

from app.execution.models import Action, ActionStatus

SANDBOX_PORT, WEB_PORTS = 13300, (13301, 13302)
WORKER_COUNTS = (1, 2, 4)
# Clients sending approvals at once in the two-web run: enough to keep both busy.
CLIENTS = 8


def load() -> float:
    return round(os.getloadavg()[0], 2)


def throughput_series(
    bench: Bench, env: dict[str, str], latency_ms: int, count: int
) -> list[dict[str, Any]]:
    """Actions a second with each number of workers, ``count`` actions a run, the
    sandbox adding ``latency_ms`` to every call once the actions are approved."""
    rows = []
    for worker_count in WORKER_COUNTS:
        # Proposing and approving reads the provider too: done at full speed, untimed.
        bench.sandbox.control("POST", "/latency", {"ms": 0})
        action_ids = approved(bench, count)
        bench.sandbox.control("POST", "/latency", {"ms": latency_ms})
        seconds, ended = drained(bench, action_ids, worker_count, env)
        if ended != {ActionStatus.SUCCEEDED}:
            raise RuntimeError(f"actions ended {sorted(ended)}, not all succeeded")
        row = {
            "workers": worker_count,
            "latency_ms": latency_ms,
            "actions": count,
            "seconds": round(seconds, 2),
            "actions_per_second": round(count / seconds, 1),
            "load_average_1m": load(),
        }
        print(
            f"{latency_ms:>7} ms | {worker_count:>7} | {count:>7} | {seconds:7.2f} s | "
            f"{row['actions_per_second']:>10.1f} | {row['load_average_1m']:5.2f}"
        )
        rows.append(row)
    bench.sandbox.control("POST", "/latency", {"ms": 0})
    return rows


def two_webs(bench: Bench, env: dict[str, str], count: int) -> dict[str, Any]:
    """Every one of ``count`` proposals approved through both web processes at once."""
    todo = proposals(bench, payments(bench, count))
    token = approver_token(bench.session_factory, bench.shop.id)
    local = threading.local()

    def approve(url: str, proposal_id: uuid.UUID, digest: str) -> tuple[str, int, str | None]:
        # One kept-alive session per client thread, as each admin page keeps one.
        if not hasattr(local, "session"):
            local.session = requests.Session()
            local.session.headers["Authorization"] = f"Bearer {token}"
        response = local.session.post(
            f"{url}/api/proposals/{proposal_id}/approve", json={"digest": digest}, timeout=30
        )
        action = response.json().get("action") if response.status_code == 200 else None
        return url, response.status_code, action["id"] if action else None

    with (
        web_process(env, WEB_PORTS[0]) as first,
        web_process(env, WEB_PORTS[1]) as second,
        workers(2, env, bench.settings.queue_name),
        ThreadPoolExecutor(CLIENTS) as pool,
        bench.session_factory() as session,
    ):
        started = datetime.now(UTC)
        answers = list(
            pool.map(
                lambda job: approve(*job),
                [(url, *proposal) for proposal in todo for url in (first, second)],
            )
        )
        approving = (datetime.now(UTC) - started).total_seconds()
        action_ids = [uuid.UUID(action_id) for _, _, action_id in answers if action_id]
        wait_until_settled(session, action_ids)
        # The end is the last action's recording, as the worker's clock wrote it.
        ended = session.scalar(select(func.max(Action.updated_at)).where(Action.id.in_(action_ids)))
        whole = (ended - started).total_seconds()
        statuses = Counter(
            str(status)
            for status in session.scalars(
                select(Action.status).where(
                    Action.proposal_id.in_([proposal_id for proposal_id, _ in todo])
                )
            )
        )
    sent = refunds_sent(bench, {str(action_id) for action_id in action_ids})
    served = Counter((url, code) for url, code, _ in answers)
    ports = [
        {
            "port": urlsplit(url).port,
            "served": sum(n for (u, _), n in served.items() if u == url),
            "approved": served[(url, 200)],
            "refused": {
                str(code): n for (u, code), n in served.items() if u == url and code != 200
            },
        }
        for url in (first, second)
    ]
    return {
        "proposals": count,
        "approve_requests": len(answers),
        "ports": ports,
        "actions": sum(statuses.values()),
        "action_statuses": dict(statuses),
        "distinct_action_ids": len(set(action_ids)),
        "refunds_at_provider": len(sent),
        "distinct_refunds": len(set(sent)),
        "approving_seconds": round(approving, 2),
        "approval_to_last_recorded_seconds": round(whole, 2),
        "actions_per_second": round(len(action_ids) / whole, 1),
        "load_average_1m": load(),
    }


def refunds_sent(bench: Bench, action_ids: set[str]) -> list[str]:
    """The action id of every refund at the provider that one of ``action_ids`` made
    (its metadata names it): one each if every action was sent once."""
    refunds = bench.secret_client.v1.refunds.list(params={"limit": 100}).auto_paging_iter()
    named = (refund.to_dict().get("metadata") or {} for refund in refunds)
    return [
        str(metadata["caseward_action_id"])
        for metadata in named
        if str(metadata.get("caseward_action_id")) in action_ids
    ]


def print_two_webs(result: dict[str, Any]) -> None:
    print(
        f"\ntwo web processes, 2 workers: {result['proposals']} proposals, each approved "
        f"through both at once ({result['approve_requests']} requests from {CLIENTS} clients)"
    )
    for port in result["ports"]:
        print(
            f"  port {port['port']}: served {port['served']}, approved {port['approved']}, "
            f"refused {port['refused']}"
        )
    print(
        f"  actions {result['actions']} {result['action_statuses']}, refunds at the provider "
        f"{result['refunds_at_provider']} ({result['distinct_refunds']} distinct)"
    )
    print(
        f"  approvals sent in {result['approving_seconds']:.2f} s, last action recorded after "
        f"{result['approval_to_last_recorded_seconds']:.2f} s: "
        f"{result['actions_per_second']:.1f} actions a second (load {result['load_average_1m']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=150, help="actions a run at 0 ms")
    parser.add_argument(
        "--slow-actions", type=int, default=48, help="actions a run at the provider latency"
    )
    parser.add_argument("--latency", type=int, default=250, help="ms added to provider calls")
    parser.add_argument("--approvals", type=int, default=100, help="proposals in the two-web run")
    args = parser.parse_args()

    with (
        bench_settings("scaling") as settings,
        sandbox_process("stripe", "--port", str(SANDBOX_PORT)) as sandbox,
    ):
        bench = build(replace(settings, stripe_api_base=sandbox.url), sandbox)
        env = worker_env(bench.settings, STRIPE_API_BASE=sandbox.url)
        print(f"{os.cpu_count()} cores, load average at the start {load()}\n")
        print(
            f"{'latency':>10} | {'workers':>7} | {'actions':>7} | {'taken':>9} | "
            f"{'actions/s':>10} | load (1 min)"
        )
        rows = throughput_series(bench, env, 0, args.actions)
        rows += throughput_series(bench, env, args.latency, args.slow_actions)
        result = two_webs(bench, env, args.approvals)
        print_two_webs(result)
    record("scaling", {"throughput": rows, "two_webs": result})


if __name__ == "__main__":
    main()
