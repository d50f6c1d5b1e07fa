"""The digest an approval is bound to: exactly what the approver reviewed.

Anything in it changing (target, amount, currency, line items, parameters, the
policy version the checks ran under) gives a new digest, and approvals of the
old one no longer count.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any


def action_digest(
    *,
    shop_id: uuid.UUID,
    provider: str,
    kind: str,
    target: str,
    customer_ref: str | None,
    amount: int | None,
    currency: str | None,
    line_items: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    policy_version: int,
) -> str:
    reviewed = {
        "shop": str(shop_id),
        "provider": provider,
        "kind": kind,
        "target": target,
        "customer": customer_ref,
        "amount": amount,
        "currency": currency,
        "line_items": sorted((str(item["line_id"]), int(item["amount"])) for item in line_items),
        "params": dict(params),
        "policy_version": policy_version,
    }
    canonical = json.dumps(reviewed, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
