"""A sweep that read a message's mark just before its draft was made does not draft it twice.

The sweep reads the messages owed a draft, then asks Redis about each one's job. Under
load, the job can finish in between: the sweep then finds a finished job for a message it
read as owed, and replaces it (a finished job is replaced when a draft is owed again).
The job run again finds the mark cleared: no draft is owed, so it drafts nothing, calls
no model and sends the shopper no second reply.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace

import pytest
from flask import Flask
from flask.testing import FlaskClient
from rq.executions import Execution
from rq.job import JobStatus
from rq.registry import StartedJobRegistry
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, CLIENT_ID, Shopper

from app.clock import utcnow
from app.conversations.models import Author, Message
from app.demo import SHOP_DOMAIN, LinenShop
from app.drafting.drafters import drafter_for
from app.drafting.jobs import (
    DRAFT_RETRY,
    draft_for_message,
    drafts_owed,
    requeue_drafting,
)
from app.drafting.models import CaseDraftRecord
from app.execution.executor import ExecutionContext
from app.jobs.connection import RedisExtension
from app.settings import Settings

DRAFTING_JOB = "app.drafting.jobs.draft_after_message"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, shopify_api_key=CLIENT_ID, shopify_api_secret=APP_SECRET)


@pytest.fixture
def shopper(app: Flask, client: FlaskClient) -> Shopper:
    app.config["CASEWARD_PROXY_PER_SHOPPER"] = "10000/minute"
    return Shopper(client, SHOP_DOMAIN)


def test_a_draft_made_while_the_sweep_looked_is_not_made_again(
    app: Flask,
    linen: LinenShop,
    shopper: Shopper,
    settings: Settings,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    shopper.say("Where is order #1001?")
    background = RedisExtension.background_queue(app)
    [job] = [job for job in background.jobs if job.func_name == DRAFTING_JOB]
    message_id = uuid.UUID(job.args[0])

    def draft() -> str:
        """The job as a worker runs it: taken off the queue, run, finished."""
        background.remove(job)
        job.set_status(JobStatus.STARTED)
        outcome, _ = draft_for_message(
            ctx.session_factory,
            ctx.adapters,
            settings,
            drafter_for(settings),
            message_id,
            now=utcnow(),
        )
        job.set_status(JobStatus.FINISHED)
        return outcome

    read_by_the_sweep = drafts_owed(session, utcnow())
    first = draft()
    # The sweep goes on with what it read: the job it finds has finished.
    queued_again = [m for m in read_by_the_sweep if requeue_drafting(background, m)]
    second = draft()

    assert read_by_the_sweep == [message_id]
    assert first.startswith("drafted")
    assert queued_again == [message_id]
    assert second == "no draft owed"
    session.expire_all()
    assert session.scalar(select(func.count()).select_from(CaseDraftRecord)) == 1
    replies = select(func.count()).select_from(Message).where(Message.author != Author.CUSTOMER)
    assert session.scalar(replies) == 1


# The job's own run, and the retry of a run that failed (the model overloaded for a while):
# faults come one after another, and the worker of that retry may be the one killed.
@pytest.mark.parametrize("retries_used", [0, 1], ids=["its own run", "the retry of a failed run"])
def test_a_draft_whose_worker_died_under_it_is_made_once_by_its_retry(
    app: Flask,
    linen: LinenShop,
    shopper: Shopper,
    settings: Settings,
    ctx: ExecutionContext,
    session: Session,
    retries_used: int,
) -> None:
    shopper.say("Where is order #1001?")
    background = RedisExtension.background_queue(app)
    [job] = [job for job in background.jobs if job.func_name == DRAFTING_JOB]
    message_id = uuid.UUID(job.args[0])
    job.retries_left = DRAFT_RETRY.max - retries_used
    job.save()
    # A worker took the job and was killed (SIGKILL): it stays started, its heartbeat
    # long gone, until the sweep finds it abandoned.
    background.remove(job)
    job.set_status(JobStatus.STARTED)
    with background.connection.pipeline() as pipeline:
        Execution.create(job, ttl=60, pipeline=pipeline)
        pipeline.execute()

    # An hour on, past its heartbeat: the sweep (RQ's clean-up) finds it abandoned.
    StartedJobRegistry(queue=background).cleanup(timestamp=time.time() + 3600)

    job.refresh()
    assert job.get_status() in (JobStatus.SCHEDULED, JobStatus.QUEUED)
    assert job.retries_left == DRAFT_RETRY.max - retries_used - 1
    # Its retry, as a worker runs it: the message is drafted, once.
    outcome, _ = draft_for_message(
        ctx.session_factory, ctx.adapters, settings, drafter_for(settings), message_id, now=utcnow()
    )
    assert outcome.startswith("drafted")
    assert drafts_owed(session, utcnow()) == []
    replies = select(func.count()).select_from(Message).where(Message.author != Author.CUSTOMER)
    assert session.scalar(replies) == 1
