"""Helpers for the money-path tests: staff API clients, worker processes, polling."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import stripe
from flask import Flask
from flask.testing import FlaskClient
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.actors import Surface, system_actor
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.connections.models import Connection
from app.crypto import secret_box
from app.db import Database
from app.execution.executor import ExecutionContext
from app.jobs.worker import WORKER_OPTIONS
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import staff_member
from app.staff.tokens import issue_token
from integrations.provider import (
    ActionKind,
    ActionRequest,
    ProviderAdapter,
    ProviderAnswer,
    TargetFacts,
)

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Account:
    id: str
    secret_key: str
    restricted_key: str
    stripe: stripe.StripeClient


class Staff:
    """The staff API as a given person sees it, with a stored token of their own."""

    def __init__(self, client: FlaskClient, app: Flask, shop_domain: str, user_id: str):
        self.token = Staff.issue_token(app, shop_domain, user_id)
        self._client = client
        self._headers = {"Authorization": f"Bearer {self.token}"}
        self.user_id = user_id

    @staticmethod
    def issue_token(
        app: Flask, shop_domain: str, user_id: str, lifetime: timedelta = timedelta(days=1)
    ) -> str:
        """A new stored token, as ``flask issue-token`` makes one. For someone who is not
        staff of the shop, the token a former member would still hold."""
        with Database.state(app).session_factory() as session:
            shop = session.scalars(select(Shop).where(Shop.domain == shop_domain)).one()
            member = staff_member(session, shop.id, user_id)
            if member is None:
                session.add(StaffMember(shop_id=shop.id, user_id=user_id, role=StaffRole.VIEWER))
            issued = issue_token(
                session,
                shop=shop,
                user_id=user_id,
                issued_by=system_actor("tests", Surface.CONSOLE),
                lifetime=lifetime,
                now=utcnow(),
                console=True,
            )
            if member is None:
                session.execute(
                    delete(StaffMember).where(
                        StaffMember.shop_id == shop.id, StaffMember.user_id == user_id
                    )
                )
            session.commit()
            return issued.secret

    def get(self, path: str) -> Any:
        return self._client.get(path, headers=self._headers)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._client.post(path, json=body, headers=self._headers)

    def put(self, path: str, body: dict[str, Any]) -> Any:
        return self._client.put(path, json=body, headers=self._headers)

    def delete(self, path: str) -> Any:
        return self._client.delete(path, headers=self._headers)


class ServiceProcess:
    """A Caseward process started as production starts it, its output kept."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.process = subprocess.Popen(
            argv,
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.output: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.decode(errors="replace"))

    def said(self, *words: str) -> bool:
        """Whether one line of its output holds every one of ``words``."""
        return any(all(word in line for word in words) for line in list(self.output))

    def kill(self) -> None:
        """SIGKILL the process and its children, as a crashed machine would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM to the process and its children at once, as a process manager stops a
        group (RQ's scheduler then stops alongside its worker, not after it)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


class WorkerProcess(ServiceProcess):
    """``rq worker --with-scheduler`` in its own process on the money queue, then the
    background queue, as in production; ``options`` are more of ``rq worker``'s."""

    def __init__(self, settings: Settings, redis_url: str, *options: str):
        env = {
            **os.environ,
            "DATABASE_URL": settings.database_url,
            "REDIS_URL": redis_url,
            "STRIPE_API_BASE": settings.stripe_api_base,
            "CASEWARD_ENCRYPTION_KEYS": ",".join(settings.encryption_keys),
            "CASEWARD_INSTANCE_PATH": str(settings.instance_path),
            "CASEWARD_RECONCILE_DELAY": str(settings.reconcile_delay_seconds),
            "CASEWARD_RECONCILE_MAX_DELAY": str(settings.reconcile_max_delay_seconds),
            "CASEWARD_PROVIDER_TIMEOUT": str(settings.provider_timeout_seconds),
            # The app's Shopify credentials and where Shopify is (the sandbox), when set.
            "SHOPIFY_API_KEY": settings.shopify_api_key,
            "SHOPIFY_API_SECRET": settings.shopify_api_secret,
            "SHOPIFY_API_BASE": settings.shopify_api_base,
            # Drafting jobs queue approved actions on the test's own money queue.
            "CASEWARD_QUEUE": settings.queue_name,
            "CASEWARD_BACKGROUND_QUEUE": settings.background_queue_name,
            "GORGIAS_API_BASE": settings.gorgias_api_base,
            "ANTHROPIC_API_KEY": settings.anthropic_api_key,
            "ANTHROPIC_BASE_URL": settings.anthropic_base_url,
        }
        rq = str(Path(sys.executable).parent / "rq")
        super().__init__(
            [
                rq,
                "worker",
                "--with-scheduler",
                "-w",
                "app.background.CasewardWorker",
                "--url",
                redis_url,
                "--path",
                str(REPO),
                *WORKER_OPTIONS,
                *options,
                settings.queue_name,
                settings.background_queue_name,
            ],
            env,
        )


def wait_for(predicate: Callable[[], Any], *, timeout: float = 20.0, what: str = "") -> Any:
    """Poll until ``predicate`` returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or predicate}")


# ------------------------------------------------------------------ Stripe out of reach


def closed_port() -> int:
    """A local port nobody listens on: connections to it are refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def execution_context(app: Flask, settings: Settings) -> ExecutionContext:
    """What the worker builds for a job, on the test app's database and settings."""
    return ExecutionContext(
        session_factory=Database.state(app).session_factory,
        adapters=connection_adapters(settings, secret_box(settings)),
        settings=settings,
        clock=utcnow,
    )


def fail_as_rq_does(queue: Queue, job: Job) -> None:
    """Leave ``job`` as RQ leaves one that raised: off the queue, failed, in the failed jobs."""
    queue.remove(job)
    job.set_status(JobStatus.FAILED)
    FailedJobRegistry(queue=queue).add(job, ttl=job.failure_ttl, exc_string="LookupError")


def unreachable(ctx: ExecutionContext, settings: Settings) -> ExecutionContext:
    """The same execution, with Stripe's address pointing at a port nobody listens on."""
    dead = replace(settings, stripe_api_base=f"http://127.0.0.1:{closed_port()}")
    return replace(ctx, adapters=connection_adapters(dead, secret_box(settings)))


@dataclass
class WritesRefused:
    """Stripe answering reads but refusing connections for writes (an edge restarting
    between the worker's fresh read and its send): two real adapters, one per side."""

    reads: ProviderAdapter
    writes: ProviderAdapter
    name: str = "stripe"

    def facts(self, kind: ActionKind, target: str) -> TargetFacts:
        return self.reads.facts(kind, target)

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        return self.writes.submit(request)

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        return self.reads.find(request)


def writes_refused(ctx: ExecutionContext, settings: Settings) -> ExecutionContext:
    dead = unreachable(ctx, settings).adapters

    def adapters(
        session: Session, shop_id: uuid.UUID, provider: str, *, connection: Connection | None = None
    ) -> ProviderAdapter:
        return WritesRefused(
            ctx.adapters(session, shop_id, provider, connection=connection),
            dead(session, shop_id, provider, connection=connection),
        )

    return replace(ctx, adapters=adapters)
