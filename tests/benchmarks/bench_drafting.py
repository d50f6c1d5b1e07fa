"""Benchmark: what prompt caching saves per drafted case, in tokens billed.

    .venv/bin/python tests/benchmarks/bench_money_path.py --only drafting [--drafts 50]

Drafts ``--drafts`` cases of one shop (one policy), each with one to three orders and a
customer message of a few sentences, with the Claude drafter on the real ``anthropic``
SDK against the Anthropic sandbox run as its own process. Three runs over the same
briefs:

* as shipped: :class:`~app.drafting.drafters.ClaudeDrafter`, the instructions and the
  shop's policy marked for the prompt cache, cases drafted back to back (the cache
  written by the first, read by the rest);
* as shipped, cache expired: the same, with the sandbox clock moved six minutes before
  each draft, so every case finds the 5-minute cache gone (a quiet shop);
* caching off: the same request built here through
  :func:`~integrations.anthropic.messages.ask_with_tool` with no block cached.

The sequence: start ``python -m integrations.anthropic.sandbox`` on a free port and read
its ``KEY=value`` lines; set its default answer to a valid ``record_case_draft`` input
(next step "answer"); build the briefs; send one untimed uncached request, so every run
finds the SDK's connection open; run the three modes; print, per mode and drafted case,
the mean tokens of each kind the usage reports, the input side billed-equivalent, and
p50/p95 wall time per call, then the saving caching gives.

Token counts are the sandbox's estimate (four characters a token), not Anthropic's
tokenizer; the cache follows Anthropic's rules (tools, then system, then messages; a
prefix under 1,024 tokens is never cached). Wall times are against a local sandbox that
answers at once: they show Caseward's own overhead, not the faster first token a cache
read gives on the real API.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench_money_path import REPO, Sandbox, percentile

from app.cases.models import Order
from app.conversations.linking import link_order
from app.drafting.brief import CaseBrief, LineBrief, MessageBrief, OrderBrief, ShipmentBrief
from app.drafting.drafters import MAX_TOKENS, ClaudeDrafter
from app.drafting.prompt import (
    INSTRUCTIONS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    case_message,
    policy_text,
)
from app.drafting.result import DRAFT_SCHEMA, NextStep, parse_draft
from integrations.anthropic.messages import SystemBlock, ToolSpec, Usage, ask_with_tool

MODEL = "claude-sonnet-4-5"
TIMEOUT_SECONDS = 10.0
SHOP_NAME = "Fern & Fold Linens"
# The policy lines app.drafting.service.brief_for writes for a shop allowing refunds
# (medium identity) and store credit (strong), within 30 days.
POLICY_LINES = (
    "A refund needs the customer verified at level medium or above.",
    "A customer_credit needs the customer verified at level strong or above.",
    "Refunds within 30 days of delivery (or fulfilment).",
)
SCRIPTED_DRAFT = {
    "summary": "The customer asks where their order is; the shipment facts answer it.",
    "next_step": "answer",
    "reply": "Thanks for getting in touch! Your parcel is on its way; the tracking link "
    "in your shipping email shows where it is.",
}
# Anthropic's published prices for 5-minute prompt caching, as multiples of the base
# input price: writing the cache costs 1.25x, reading it 0.1x.
CACHE_WRITE_MULTIPLIER = 1.25
CACHE_READ_MULTIPLIER = 0.1
# Past the 5-minute lifetime of an ephemeral cache entry.
QUIET_SECONDS = 6 * 60


def billed_input(usage: Usage) -> float:
    """Input-side tokens at the base input price that ``usage`` costs."""
    return (
        usage.input_tokens
        + CACHE_WRITE_MULTIPLIER * usage.cache_creation_input_tokens
        + CACHE_READ_MULTIPLIER * usage.cache_read_input_tokens
    )


# ------------------------------------------------------------------ the sandbox


@contextmanager
def anthropic_sandbox() -> Iterator[tuple[Sandbox, str]]:
    """``python -m integrations.anthropic.sandbox`` on a free port; its control handle
    and the API key it accepts."""
    process = subprocess.Popen(
        [sys.executable, "-m", "integrations.anthropic.sandbox", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    values: dict[str, str] = {}
    while "ANTHROPIC_SANDBOX_API_KEY" not in values:
        line = process.stdout.readline().decode().strip()
        if not line:
            process.kill()
            raise RuntimeError("the Anthropic sandbox did not start")
        key, _, value = line.partition("=")
        values[key] = value
    try:
        sandbox = Sandbox(
            values["ANTHROPIC_SANDBOX_URL"], values["ANTHROPIC_SANDBOX_CONTROL_TOKEN"], process
        )
        yield sandbox, values["ANTHROPIC_SANDBOX_API_KEY"]
    finally:
        process.terminate()
        process.wait(timeout=10)


# ------------------------------------------------------------------ the cases

# What the shop sells: title and unit price in cents.
CATALOGUE = (
    ("Linen apron, natural", 2400),
    ("Linen apron, charcoal", 2400),
    ("Tea towel set of three", 1800),
    ("Stonewashed duvet cover, queen", 18900),
    ("Pillowcase pair, sage", 4200),
    ("Waffle bath towel", 3400),
    ("Table runner, oat", 3900),
    ("Napkins, set of four", 2800),
)
SHIPPING = 800  # cents, on every order
CARRIERS = ("UPS", "USPS", "FedEx")

# The customer's message, by what they want ({order}: one of their order names, {item}:
# a title from it), and whether that order has arrived by then (None: either).
MESSAGES = (
    (
        "Hi there, I ordered the {item} about a week ago ({order}) and the tracking has not "
        "moved since Monday. Could you tell me where it is? I need it before the weekend.",
        False,
    ),
    (
        "Hello! My order {order} arrived yesterday, but the {item} has a small tear along "
        "the hem. I love everything else. What can you do about the torn one? I can send "
        "photos.",
        True,
    ),
    (
        "Good morning. I think I was sent the wrong colour: I picked the {item} and the one "
        "in the box is different. Order {order}. Can I swap it, or should I send it back "
        "first?",
        True,
    ),
    (
        "Hi, quick question about the {item}. Is it fine to tumble dry, or will it shrink? "
        "The label is in a language I can't read. Thanks so much!",
        None,
    ),
    (
        "Hello, I would like to return the {item} from my last order. It's unused and still "
        "in its packaging, it just doesn't suit our kitchen. How do I go about that?",
        True,
    ),
    (
        "Hey, I placed two orders this month and only one has arrived. The {item} is the "
        "one I'm still waiting for. Could you check on it for me? My email is the one on "
        "file.",
        False,
    ),
)
# An order is delivered a week after it is placed.
DELIVERY_DAYS = 7


def case_briefs(count: int) -> list[CaseBrief]:
    """``count`` briefs of verified customers of one shop, as brief_for builds them:
    one to three orders each, the order linked from the message when it names one."""
    picker = random.Random(20_260_101)
    numbers = iter(range(1001, 1001 + 3 * count))
    today = datetime(2026, 3, 2, tzinfo=UTC)
    briefs = []
    for _ in range(count):
        orders = [
            _order(picker, f"#{next(numbers)}", today - timedelta(days=picker.randint(2, 40)))
            for _ in range(picker.randint(1, 3))
        ]
        about = picker.choice(orders)
        words, arrived = picker.choice(MESSAGES)
        if arrived is not None:
            days = picker.randint(10, 25) if arrived else picker.randint(2, DELIVERY_DAYS - 1)
            about.created_at = today - timedelta(days=days)
        text = words.format(order=about.name, item=picker.choice(about.lines)["title"])
        linking = link_order([text], orders)
        briefs.append(
            CaseBrief(
                shop_name=SHOP_NAME,
                verified=True,
                identity_level="medium",
                kinds_allowed=("refund", "customer_credit"),
                policy_lines=POLICY_LINES,
                messages=(MessageBrief("customer", text),),
                orders=tuple(_order_brief(picker, order, today) for order in orders),
                picked_order=linking.picked.name if linking.picked else None,
                unmatched=linking.unmatched,
            )
        )
    return briefs


def _order(picker: random.Random, name: str, placed: datetime) -> Order:
    """An unsaved order of one to three catalogue lines, paid through Stripe."""
    lines: list[dict[str, Any]] = []
    for index, (title, price) in enumerate(picker.sample(CATALOGUE, picker.randint(1, 3))):
        quantity = picker.randint(1, 3)
        lines.append(
            {
                "id": f"gid://shopify/LineItem/{name.lstrip('#')}{index}",
                "title": title,
                "quantity": quantity,
                "paid": price * quantity,
            }
        )
    return Order(
        id=uuid.uuid4(),
        name=name,
        currency="usd",
        total=sum(line["paid"] for line in lines) + SHIPPING,
        payment_provider="stripe",
        payment_id=f"pi_bench_{name.lstrip('#')}",
        lines=lines,
        created_at=placed,
    )


def _order_brief(picker: random.Random, order: Order, today: datetime) -> OrderBrief:
    placed = order.created_at
    delivered = (today - placed).days >= DELIVERY_DAYS
    shipment = None
    if not delivered:
        shipment = ShipmentBrief(
            status="in_transit",
            carrier=picker.choice(CARRIERS),
            tracking_number=f"{picker.randrange(10**12):012d}",
            estimated_delivery=(today + timedelta(days=picker.randint(1, 4))).date().isoformat(),
        )
    return OrderBrief(
        name=order.name,
        currency=order.currency,
        total=order.total,
        placed_on=placed.date().isoformat(),
        lines=tuple(
            LineBrief(line["id"], line["title"], line["quantity"], line["paid"])
            for line in order.lines
        ),
        delivered=delivered,
        shipment=shipment,
    )


# ------------------------------------------------------------------ the runs


@dataclass(frozen=True)
class Call:
    usage: Usage
    seconds: float


def as_shipped(api_key: str, url: str) -> Callable[[CaseBrief], Usage]:
    """The shipped drafter: instructions and policy cached."""
    drafter = ClaudeDrafter(
        api_key=api_key,
        base_url=url,
        model=MODEL,
        timeout_seconds=TIMEOUT_SECONDS,
        max_retries=0,
    )

    def draft(brief: CaseBrief) -> Usage:
        run = drafter.run(brief)
        if run.failure is not None or run.usage is None:
            raise RuntimeError(f"the drafter did not draft: {run.failure}")
        return run.usage

    return draft


def uncached(api_key: str, url: str) -> Callable[[CaseBrief], Usage]:
    """The shipped drafter's request and parsing, with no block marked for the cache."""

    def draft(brief: CaseBrief) -> Usage:
        answer = ask_with_tool(
            api_key=api_key,
            base_url=url,
            model=MODEL,
            system=[SystemBlock(INSTRUCTIONS), SystemBlock(policy_text(brief))],
            messages=[{"role": "user", "content": case_message(brief)}],
            tool=ToolSpec(TOOL_NAME, TOOL_DESCRIPTION, DRAFT_SCHEMA),
            max_tokens=MAX_TOKENS,
            timeout_s=TIMEOUT_SECONDS,
            max_retries=0,
        )
        if parse_draft(answer.tool_input).step != NextStep.ANSWER:
            raise RuntimeError("the sandbox answered another draft than the one scripted")
        return answer.usage

    return draft


def timed(
    draft: Callable[[CaseBrief], Usage],
    briefs: list[CaseBrief],
    before_each: Callable[[], object] = lambda: None,
) -> list[Call]:
    """Each brief drafted in turn; ``before_each`` runs untimed before every draft."""
    calls = []
    for brief in briefs:
        before_each()
        started = time.perf_counter()
        usage = draft(brief)
        calls.append(Call(usage, time.perf_counter() - started))
    return calls


def row(mode: str, calls: list[Call]) -> str:
    def mean(tokens: Callable[[Usage], float]) -> float:
        return statistics.fmean(tokens(call.usage) for call in calls)

    seconds = [call.seconds for call in calls]
    return (
        f"{mode:>25} | {mean(lambda u: u.input_tokens):7.1f} | "
        f"{mean(lambda u: u.cache_creation_input_tokens):7.1f} | "
        f"{mean(lambda u: u.cache_read_input_tokens):7.1f} | "
        f"{mean(lambda u: u.output_tokens):6.1f} | {mean(billed_input):8.1f} | "
        f"p50 {statistics.median(seconds) * 1000:5.1f} p95 {percentile(seconds, 0.95) * 1000:5.1f}"
    )


def drafting_figures(*, drafts: int) -> None:
    """Print tokens and time per drafted case with and without prompt caching."""
    briefs = case_briefs(drafts)
    with anthropic_sandbox() as (sandbox, api_key):
        answer: dict[str, Any] = {"kind": "tool_use", "input": SCRIPTED_DRAFT}
        sandbox.control("POST", "/answers/default", {"answer": answer})
        shipped, plain = as_shipped(api_key, sandbox.url), uncached(api_key, sandbox.url)
        plain(briefs[0])  # opens the SDK's connection; nothing is cached without breakpoints
        runs = {
            "as shipped (cached)": timed(shipped, briefs),
            "as shipped, cache expired": timed(
                shipped,
                briefs,
                lambda: sandbox.control("POST", "/clock/advance", {"seconds": QUIET_SECONDS}),
            ),
            "caching off": timed(plain, briefs),
        }
    print(
        f"drafting {drafts} cases of one shop (1-3 orders each) with the Claude drafter, "
        "Anthropic sandbox as a process; tokens per drafted case (mean), the sandbox's "
        "estimate of 4 characters a token"
    )
    print(
        f"{'mode':>25} | {'input':>7} | {'c.write':>7} | {'c.read':>7} | {'output':>6} | "
        f"{'billed':>8} | wall time per call (ms)"
    )
    for mode, calls in runs.items():
        print(row(mode, calls))
    print(
        "billed: input-side tokens at the base input price, "
        f"input + {CACHE_WRITE_MULTIPLIER} x cache write + {CACHE_READ_MULTIPLIER} x cache read"
    )

    def billed(mode: str) -> float:
        return statistics.fmean(billed_input(call.usage) for call in runs[mode])

    off = billed("caching off")
    print(
        f"saving from caching: {1 - billed('as shipped (cached)') / off:.1%} of the input side "
        "with drafts back to back; when every draft finds the cache expired, "
        f"{billed('as shipped, cache expired') / off - 1:+.1%} (each pays the cache write)"
    )
