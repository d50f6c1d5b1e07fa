"""Run the Anthropic sandbox as a process (the offline demo, or tests of the entry point).

    python -m integrations.anthropic.sandbox --host 127.0.0.1 --port 12113 [--api-key KEY]

Prints ``KEY=value`` lines (URL, control token, API key) so both people and scripts can
read them, then serves until SIGINT/SIGTERM. Answers are scripted through the
``/_sandbox/answers`` control routes; unscripted requests get a text answer saying so.
"""

from __future__ import annotations

import argparse
import os

from integrations.sandbox_kit import serve_until_signalled

from .sandbox import DEMO_API_KEY, AnthropicSandbox


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start serving, block until told to stop."""
    parser = argparse.ArgumentParser(
        prog="python -m integrations.anthropic.sandbox", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12113, help="0 picks a free port")
    parser.add_argument(
        "--control-token",
        default=os.environ.get("ANTHROPIC_SANDBOX_CONTROL_TOKEN"),
        help="token for /_sandbox/ routes (default: $ANTHROPIC_SANDBOX_CONTROL_TOKEN or random)",
    )
    parser.add_argument(
        "--api-key", default=DEMO_API_KEY, help="the API key accepted (default: the demo key)"
    )
    args = parser.parse_args(argv)

    sandbox = AnthropicSandbox(control_token=args.control_token, api_keys=[args.api_key])
    handle = sandbox.start(args.host, args.port)
    lines = [
        f"ANTHROPIC_SANDBOX_URL={handle.url}",
        f"ANTHROPIC_SANDBOX_CONTROL_TOKEN={handle.control_token}",
        f"ANTHROPIC_SANDBOX_API_KEY={args.api_key}",
    ]
    return serve_until_signalled(handle, lines, "anthropic sandbox")


if __name__ == "__main__":
    raise SystemExit(main())
