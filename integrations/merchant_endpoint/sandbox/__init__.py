"""A merchant's endpoint as Caseward's protocol wants it: the receiving server of the tests.

It does what a careful merchant's endpoint does: it verifies every signature (401 for an
unsigned, tampered, expired or unknown-secret request), honours idempotency keys (a resend
gets the first answer again; the key with another body gets 409), refunds payments and
credits customers within what they hold, and keeps all of it in a SQLite file so that a
restart loses nothing. For tests it also records every request it received with its
headers, seeds payments and customers, and injects faults: the kit's (500 or a dropped
connection before or after the commit, an answer slower than the client waits, holds)
and its own (the process exits right after a commit).

In-process::

    receiver = MerchantReceiver()                 # records in memory
    handle = receiver.start()                     # handle.url, handle.stop()
    receiver.set_secrets([secret])
    receiver.seed_customer("cust_9", email="maya@example.com")
    receiver.seed_payment("pay_1", amount=9600, currency="usd", customer="cust_9")
    receiver.store.effects()                      # what it did, with the key of each
    receiver.store.requests()                     # what arrived, headers included

As a process: ``python -m integrations.merchant_endpoint.sandbox --port 0 --data-dir DIR``.
"""

from .sandbox import CRASH_EXIT_STATUS, MerchantReceiver

__all__ = ["CRASH_EXIT_STATUS", "MerchantReceiver"]
