"""Run the Slack sandbox as a process (the offline demo's channel).

    python -m integrations.slack.sandbox --host 127.0.0.1 --port 12116

Prints ``KEY=value`` lines (URL, control token) so both people and scripts can read them,
then serves until SIGINT/SIGTERM. ``GET /_sandbox/posts`` shows what was posted.
"""

from __future__ import annotations

import argparse
import os

from integrations.sandbox_kit import serve_until_signalled

from .sandbox import SlackSandbox


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start serving, block until told to stop."""
    parser = argparse.ArgumentParser(
        prog="python -m integrations.slack.sandbox", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12116, help="0 picks a free port")
    parser.add_argument(
        "--control-token",
        default=os.environ.get("SLACK_SANDBOX_CONTROL_TOKEN"),
        help="token for /_sandbox/ routes (default: $SLACK_SANDBOX_CONTROL_TOKEN or random)",
    )
    args = parser.parse_args(argv)

    sandbox = SlackSandbox(control_token=args.control_token)
    handle = sandbox.start(args.host, args.port)
    lines = [
        f"SLACK_SANDBOX_URL={handle.url}",
        f"SLACK_SANDBOX_CONTROL_TOKEN={handle.control_token}",
    ]
    return serve_until_signalled(handle, lines, "slack sandbox")


if __name__ == "__main__":
    raise SystemExit(main())
