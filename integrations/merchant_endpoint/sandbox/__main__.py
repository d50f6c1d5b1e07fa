"""Run the receiving server as a process (tests, or trying the protocol by hand).

    python -m integrations.merchant_endpoint.sandbox --host 127.0.0.1 --port 12115 \
        --data-dir DIR

Prints ``KEY=value`` lines (URL, control token) so both people and scripts can read them,
then serves until SIGINT/SIGTERM. Started again with the same ``--data-dir`` it knows
everything it knew: payments, customers, keys, effects, secrets, requests received.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from integrations.sandbox_kit import serve_until_signalled

from .sandbox import MerchantReceiver


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start serving, block until told to stop."""
    parser = argparse.ArgumentParser(
        prog="python -m integrations.merchant_endpoint.sandbox", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12115, help="0 picks a free port")
    parser.add_argument("--data-dir", type=Path, required=True, help="where its records live")
    parser.add_argument(
        "--control-token",
        default=os.environ.get("MERCHANT_RECEIVER_CONTROL_TOKEN"),
        help="token for /_sandbox/ routes (default: $MERCHANT_RECEIVER_CONTROL_TOKEN or random)",
    )
    args = parser.parse_args(argv)

    receiver = MerchantReceiver(args.data_dir, control_token=args.control_token)
    handle = receiver.start(args.host, args.port)
    lines = [
        f"MERCHANT_RECEIVER_URL={handle.url}",
        f"MERCHANT_RECEIVER_CONTROL_TOKEN={handle.control_token}",
    ]
    return serve_until_signalled(handle, lines, "merchant receiver")


if __name__ == "__main__":
    raise SystemExit(main())
