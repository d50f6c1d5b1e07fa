"""Run the Gorgias sandbox as a process (the offline demo, or tests of the entry point).

    python -m integrations.gorgias.sandbox --host 127.0.0.1 --port 12114 [--no-demo]

Prints ``KEY=value`` lines (URL, control token, and the demo account's domain, API user,
API key and ticket) so both people and scripts can read them, then serves until
SIGINT/SIGTERM. HTTP integrations are configured through the
``/_sandbox/accounts/{domain}/integrations`` control route, once the receiver knows the
secret header it expects.
"""

from __future__ import annotations

import argparse
import os

from integrations.sandbox_kit import serve_until_signalled

from .demo import seed_demo_account
from .sandbox import GorgiasSandbox


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, seed, start serving, block until told to stop."""
    parser = argparse.ArgumentParser(
        prog="python -m integrations.gorgias.sandbox", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12114, help="0 picks a free port")
    parser.add_argument(
        "--control-token",
        default=os.environ.get("GORGIAS_SANDBOX_CONTROL_TOKEN"),
        help="token for /_sandbox/ routes (default: $GORGIAS_SANDBOX_CONTROL_TOKEN or random)",
    )
    parser.add_argument("--no-demo", action="store_true", help="do not create the demo account")
    args = parser.parse_args(argv)

    sandbox = GorgiasSandbox(control_token=args.control_token)
    handle = sandbox.start(args.host, args.port)
    lines = [
        f"GORGIAS_SANDBOX_URL={handle.url}",
        f"GORGIAS_SANDBOX_CONTROL_TOKEN={handle.control_token}",
    ]
    if not args.no_demo:
        demo = seed_demo_account(sandbox)
        lines += [
            f"GORGIAS_SANDBOX_DOMAIN={demo.domain}",
            f"GORGIAS_SANDBOX_API_USER={demo.api_user}",
            f"GORGIAS_SANDBOX_API_KEY={demo.api_key}",
            f"GORGIAS_SANDBOX_TICKET={demo.ticket_id}",
        ]
    return serve_until_signalled(handle, lines, "gorgias sandbox")


if __name__ == "__main__":
    raise SystemExit(main())
