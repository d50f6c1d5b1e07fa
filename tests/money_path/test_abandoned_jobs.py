"""A worker killed in the middle of a job: the job is found abandoned one heartbeat later,
and another worker does its work, once.

The worker runs each job in its own process, a thread beside the job beating its
heartbeat; the job's place among the started jobs lasts one beat interval plus 60 s.
Killed, the worker beats no more; the sweep finds the place lapsed and gives the job its
retry. Here a drafting job waits on Claude (the Anthropic sandbox holds the request)
when its worker is SIGKILLed, as the load benchmark's faults do.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import WorkerProcess, wait_for
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry, StartedJobRegistry
from rq.scheduler import SCHEDULER_LOCKING_KEY_TEMPLATE
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, CLIENT_ID, Shopper

from app.background import sweep
from app.clock import utcnow
from app.conversations.models import Author, Message
from app.demo import SHOP_DOMAIN, LinenShop
from app.drafting.jobs import DRAFT_RETRY
from app.drafting.models import CaseDraftRecord
from app.drafting.result import NextStep
from app.execution.executor import ExecutionContext
from app.jobs.connection import RedisExtension
from app.settings import Settings
from integrations.anthropic.sandbox import DEMO_API_KEY, AnthropicSandbox, answers

DRAFTING_JOB = "app.drafting.jobs.draft_after_message"
BEAT_SECONDS = 1


@pytest.fixture
def claude(served_claude: AnthropicSandbox) -> AnthropicSandbox:
    served_claude.reset()
    served_claude.set_default(
        answers.tool_use(
            {
                "summary": "The customer asks where their order is.",
                "next_step": NextStep.ANSWER.value,
                "tell": ["shipment"],
                "free_text": "Thanks for getting in touch.",
            }
        )
    )
    return served_claude


@pytest.fixture
def settings(settings: Settings, claude: AnthropicSandbox) -> Settings:
    assert claude.url is not None
    return replace(
        settings,
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        anthropic_api_key=DEMO_API_KEY,
        anthropic_base_url=claude.url,
    )


@pytest.fixture
def shopper(app: Flask, client: FlaskClient) -> Shopper:
    app.config["CASEWARD_PROXY_PER_SHOPPER"] = "10000/minute"
    return Shopper(client, SHOP_DOMAIN)


def _place_lapses_at(queue: Queue, job: Job) -> float | None:
    """When the job's place among the started jobs lapses (epoch seconds), if it has one."""
    places = queue.connection.zrange(StartedJobRegistry(queue=queue).key, 0, -1, withscores=True)
    return next((score for member, score in places if member.decode().startswith(job.id)), None)


def test_a_draft_whose_worker_was_killed_is_made_once_a_heartbeat_later(
    app: Flask,
    linen: LinenShop,
    shopper: Shopper,
    claude: AnthropicSandbox,
    settings: Settings,
    redis_url: str,
    ctx: ExecutionContext,
    queue: Queue,
    session: Session,
) -> None:
    hold = claude.arm_fault("hold")
    shopper.say("Where is order #1001?")
    background = RedisExtension.background_queue(app)
    [job] = [job for job in background.jobs if job.func_name == DRAFTING_JOB]
    killed = WorkerProcess(settings, redis_url, "--job-monitoring-interval", str(BEAT_SECONDS))
    try:
        wait_for(
            lambda: any(h.id == hold.id and h.waiting for h in claude.holds()),
            what="the drafting job asking Claude",
            timeout=30,
        )
        # It beats while Claude thinks: its place is pushed on, one beat plus 60 s ahead.
        first = wait_for(lambda: _place_lapses_at(background, job), what="a started job")
        beaten = wait_for(
            lambda: (lapses := _place_lapses_at(background, job)) and lapses > first and lapses,
            what="a heartbeat",
            timeout=10,
        )
        assert beaten - time.time() <= BEAT_SECONDS + 60
    finally:
        killed.kill()
    claude.release_hold(hold.id)

    # Not yet abandoned while its last beat holds; a beat past it, its retry is queued.
    assert sweep(ctx, queue)["abandoned jobs"] == []
    lapsed = replace(ctx, clock=lambda: utcnow() + timedelta(seconds=BEAT_SECONDS + 61))
    assert [found.split(":")[0] for found in sweep(lapsed, queue)["abandoned jobs"]] == [job.id]
    job.refresh()
    assert job.get_status() == JobStatus.SCHEDULED
    assert job.retries_left == DRAFT_RETRY.max - 1  # this run was its first retry

    # Time moves on in Redis as it did on the sweep's clock: the dead worker's scheduler
    # lock lapses (a minute after its last renewal) and the retry's 30 s pass.
    redis = background.connection
    for name in (queue.name, background.name):
        redis.delete(SCHEDULER_LOCKING_KEY_TEMPLATE % name)
    redis.zadd(ScheduledJobRegistry(queue=background).key, {job.id: time.time()})
    # Another worker takes over the dead one's scheduler at its maintenance (here every
    # 5 s, and it wakes for it as often) and runs the retry: the shopper is answered once.
    replacement = WorkerProcess(
        settings, redis_url, "--maintenance-interval", "5", "--worker-ttl", "20"
    )
    try:
        wait_for(
            lambda: session.scalar(
                select(func.count()).select_from(Message).where(Message.author != Author.CUSTOMER)
            ),
            what="the shop's reply",
            timeout=120,
        )
    finally:
        replacement.kill()
    session.expire_all()
    replies = select(func.count()).select_from(Message).where(Message.author != Author.CUSTOMER)
    assert session.scalar(replies) == 1
    assert session.scalar(select(func.count()).select_from(CaseDraftRecord)) == 1
    assert len(claude.request_bodies()) == 2
