"""Run the Shopify sandbox as a process (the offline demo, or tests of the entry point).

    python -m integrations.shopify.sandbox --host 127.0.0.1 --port 12112
        [--app-url URL] [--app-proxy-url URL] [--no-demo] [--webhook URL]
        [--demo-payment-reference pi_... | --demo-payment-reference-file PATH]

Prints ``KEY=value`` lines (URL, control token, app credentials, the demo shop and its
records) so both people and scripts can read them, then serves until SIGINT/SIGTERM.

The offline demo starts this process beside the app's seeder, which creates the Stripe
payment that paid order #1001 only once Stripe's sandbox is up: the seeder writes the
payment's id to a file, and this process, given that file, waits for it before serving.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from integrations.sandbox_kit import serve_until_signalled

from .demo import seed_demo_shop
from .sandbox import DEMO_API_KEY, DEMO_API_SECRET, ShopifySandbox
from .webhooks import TOPICS


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, seed, start serving, block until told to stop."""
    parser = argparse.ArgumentParser(
        prog="python -m integrations.shopify.sandbox", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12112, help="0 picks a free port")
    parser.add_argument(
        "--control-token",
        default=os.environ.get("SHOPIFY_SANDBOX_CONTROL_TOKEN"),
        help="token for /_sandbox/ endpoints (default: $SHOPIFY_SANDBOX_CONTROL_TOKEN or random)",
    )
    parser.add_argument("--api-key", default=os.environ.get("SHOPIFY_API_KEY") or DEMO_API_KEY)
    parser.add_argument(
        "--api-secret", default=os.environ.get("SHOPIFY_API_SECRET") or DEMO_API_SECRET
    )
    parser.add_argument("--no-demo", action="store_true", help="do not create the demo shop")
    parser.add_argument(
        "--app-url",
        default=None,
        help="where the embedded app is served: the stand-in admin frames its /app",
    )
    parser.add_argument(
        "--app-proxy-url",
        default=None,
        help="the app's proxy address: storefront requests to /apps/caseward go there",
    )
    paid_by = parser.add_mutually_exclusive_group()
    paid_by.add_argument(
        "--demo-payment-reference",
        default=None,
        help="the Stripe payment intent that paid the demo order (default: Shopify Payments)",
    )
    paid_by.add_argument(
        "--demo-payment-reference-file",
        type=Path,
        default=None,
        help="wait until this file names the Stripe payment intent that paid the demo order",
    )
    parser.add_argument(
        "--webhook",
        action="append",
        default=[],
        help="an app-wide webhook address (every topic, every shop); may repeat",
    )
    args = parser.parse_args(argv)

    sandbox = ShopifySandbox(
        api_key=args.api_key, api_secret=args.api_secret, control_token=args.control_token
    )
    sandbox.standin.app_url = args.app_url
    sandbox.storefront.app_proxy_url = args.app_proxy_url
    reference = args.demo_payment_reference
    if args.demo_payment_reference_file is not None and not args.no_demo:
        reference = _wait_for_reference(args.demo_payment_reference_file)
    for url in args.webhook:
        sandbox.subscribe(url=url, topics=TOPICS)
    handle = sandbox.start(args.host, args.port)
    lines = [
        f"SHOPIFY_SANDBOX_URL={handle.url}",
        f"SHOPIFY_SANDBOX_CONTROL_TOKEN={handle.control_token}",
        f"SHOPIFY_API_KEY={sandbox.api_key}",
        f"SHOPIFY_API_SECRET={sandbox.api_secret}",
    ]
    if not args.no_demo:
        demo = seed_demo_shop(sandbox, payment_reference=reference)
        lines += [
            f"SHOPIFY_SANDBOX_SHOP={demo.domain}",
            f"SHOPIFY_SANDBOX_CUSTOMER={demo.customer_id}",
            f"SHOPIFY_SANDBOX_ORDER={demo.order_id}",
        ]
    return serve_until_signalled(handle, lines, "shopify sandbox")


def _wait_for_reference(path: Path) -> str:
    """The payment intent id in ``path``, once a writer has put it there (whole: the
    writer renames a finished file into place)."""
    if not path.is_file():
        print(f"shopify sandbox: waiting for {path} (the demo order's payment)", file=sys.stderr)
    while not (path.is_file() and path.read_text().strip()):
        time.sleep(0.2)
    return path.read_text().strip()


if __name__ == "__main__":
    raise SystemExit(main())
