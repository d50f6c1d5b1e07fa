"""``python -m integrations.anthropic.sandbox``: prints what a client needs, serves the
real SDK, stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests
from anthropic_sandbox_support import GOOD_DRAFT, ask

ROOT = Path(__file__).resolve().parents[2]


def test_process_entry_point_serves_and_stops() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "integrations.anthropic.sandbox", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ANTHROPIC_SANDBOX_CONTROL_TOKEN": "test-token"},
    )
    try:
        assert process.stdout is not None
        printed: dict[str, str] = {}
        while "ANTHROPIC_SANDBOX_API_KEY" not in printed:
            line = process.stdout.readline()
            assert line, "the sandbox exited before printing its key"
            name, _, value = line.strip().partition("=")
            printed[name] = value
        url = printed["ANTHROPIC_SANDBOX_URL"]
        assert printed["ANTHROPIC_SANDBOX_CONTROL_TOKEN"] == "test-token"
        script: dict[str, Any] = {"answers": [{"kind": "tool_use", "input": GOOD_DRAFT}]}
        queued = requests.post(
            f"{url}/_sandbox/answers",
            json=script,
            headers={"Authorization": "Bearer test-token"},
            timeout=5,
        )
        assert queued.json() == {"queued": 1}
        answer = ask(url, api_key=printed["ANTHROPIC_SANDBOX_API_KEY"])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert answer.tool_input == GOOD_DRAFT
    assert process.returncode == 0
