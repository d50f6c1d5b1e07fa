"""Run the Stripe sandbox as a process (the offline demo, or tests of the entry point).

    python -m integrations.stripe.sandbox --host 127.0.0.1 --port 12111 [--snapshot FILE]
        [--rate-limits stripe | --rate-limits test=25/25,live=100/100]

Prints ``KEY=value`` lines (URL, control token, demo account and keys) so both people and
scripts can read them, then serves until SIGINT/SIGTERM, saving the snapshot on the way
out when one is configured.
"""

from __future__ import annotations

import argparse
import os

from integrations.sandbox_kit import serve_until_signalled

from .ratelimit import RateLimits
from .sandbox import DEMO_ACCOUNT_ID, DEMO_RESTRICTED_KEY, DEMO_SECRET_KEY, StripeSandbox


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start serving, block until told to stop."""
    parser = argparse.ArgumentParser(
        prog="python -m integrations.stripe.sandbox", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12111, help="0 picks a free port")
    parser.add_argument("--snapshot", default=None, help="JSON file to restore from and save to")
    parser.add_argument(
        "--control-token",
        default=os.environ.get("STRIPE_SANDBOX_CONTROL_TOKEN"),
        help="token for /_sandbox/ endpoints (default: $STRIPE_SANDBOX_CONTROL_TOKEN or random)",
    )
    parser.add_argument("--no-demo", action="store_true", help="do not create the demo account")
    parser.add_argument(
        "--refund-failure-delay",
        type=float,
        default=60.0,
        help="seconds until refundFail refunds fail",
    )
    parser.add_argument(
        "--dispute-delay",
        type=float,
        default=2.0,
        help="seconds until createDispute charges are disputed",
    )
    parser.add_argument(
        "--rate-limits",
        type=RateLimits.parse,
        default=None,
        help="answer 429 past so many reads/writes per second per account: 'stripe' for "
        "Stripe's numbers (test 25/25, live 100/100) or "
        "'test=READ/WRITE,live=READ/WRITE[,per=SECONDS]' (default: no limit)",
    )
    args = parser.parse_args(argv)

    sandbox = StripeSandbox(
        snapshot_path=args.snapshot,
        control_token=args.control_token,
        demo_account=not args.no_demo,
        refund_failure_delay=args.refund_failure_delay,
        dispute_delay=args.dispute_delay,
        rate_limits=args.rate_limits,
    )
    handle = sandbox.start(args.host, args.port)
    lines = [
        f"STRIPE_SANDBOX_URL={handle.url}",
        f"STRIPE_SANDBOX_CONTROL_TOKEN={handle.control_token}",
    ]
    if not args.no_demo:
        lines += [
            f"STRIPE_SANDBOX_ACCOUNT={DEMO_ACCOUNT_ID}",
            f"STRIPE_SANDBOX_SECRET_KEY={DEMO_SECRET_KEY}",
            f"STRIPE_SANDBOX_RESTRICTED_KEY={DEMO_RESTRICTED_KEY}",
        ]
    return serve_until_signalled(handle, lines, "stripe sandbox")


if __name__ == "__main__":
    raise SystemExit(main())
