"""``python -m integrations.gorgias.sandbox``: prints what a client needs, serves the demo
account to the client, stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from integrations.gorgias import AccountBudgets, GorgiasClient, Ticket

ROOT = Path(__file__).resolve().parents[2]


def test_process_entry_point_serves_the_demo_ticket_and_stops() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "integrations.gorgias.sandbox", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GORGIAS_SANDBOX_CONTROL_TOKEN": "test-token"},
    )
    try:
        assert process.stdout is not None
        printed: dict[str, str] = {}
        while "GORGIAS_SANDBOX_TICKET" not in printed:
            line = process.stdout.readline()
            assert line, "the sandbox exited before printing the demo ticket"
            name, _, value = line.strip().partition("=")
            printed[name] = value
        assert printed["GORGIAS_SANDBOX_CONTROL_TOKEN"] == "test-token"
        with GorgiasClient(
            f"https://{printed['GORGIAS_SANDBOX_DOMAIN']}",
            printed["GORGIAS_SANDBOX_API_USER"],
            printed["GORGIAS_SANDBOX_API_KEY"],
            timeout_s=5.0,
            api_base=printed["GORGIAS_SANDBOX_URL"],
            budgets=AccountBudgets(),
        ) as client:
            ticket: Ticket = client.ticket(int(printed["GORGIAS_SANDBOX_TICKET"]))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert printed["GORGIAS_SANDBOX_DOMAIN"] == "linen-and-loom.gorgias.com"
    assert ticket.customer is not None and ticket.customer.email == "maya@example.com"
    assert "order #1001" in (ticket.subject or "")
    assert "torn" in ticket.messages[0].body_text
    assert process.returncode == 0


def test_no_demo_serves_no_account() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "integrations.gorgias.sandbox", "--port", "0", "--no-demo"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first, second = process.stdout.readline(), process.stdout.readline()
        url = first.strip().partition("=")[2]
        token = second.strip().partition("=")[2]
        demo = httpx.get(
            f"{url}/_sandbox/accounts/linen-and-loom.gorgias.com",
            headers={"Authorization": f"Bearer {token}"},
            timeout=5.0,
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert first.startswith("GORGIAS_SANDBOX_URL=http://127.0.0.1:")
    assert second.startswith("GORGIAS_SANDBOX_CONTROL_TOKEN=")
    assert process.stdout.read() == ""
    assert demo.status_code == 404
    assert process.returncode == 0
