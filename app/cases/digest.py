"""The digest an approval is bound to: exactly what the approver reviewed.

Anything in it changing (target, amount, currency, line items, parameters, the
policy version the checks ran under) gives a new digest, and approvals of the
old one no longer count.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any, Protocol


class Reviewable(Protocol):
    """What an approver reviews: a proposal, or the action copied from it."""

    shop_id: uuid.UUID
    provider: str
    kind: str
    target: str
    customer_ref: str | None
    amount: int | None
    currency: str | None
    line_items: list[dict[str, Any]]
    params: dict[str, Any]


def digest_of(item: Reviewable, policy_version: int) -> str:
    """The digest of ``item`` under ``policy_version``.

    Compared with an approved digest under the shop's *current* policy version, it
    shows any change of content or of policy since the review, in one comparison.
    """
    reviewed = {
        "shop": str(item.shop_id),
        "provider": item.provider,
        "kind": item.kind,
        "target": item.target,
        "customer": item.customer_ref,
        "amount": item.amount,
        "currency": item.currency,
        "line_items": sorted(_reviewed_line(line) for line in item.line_items),
        "params": item.params,
        "policy_version": policy_version,
    }
    canonical = json.dumps(reviewed, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _reviewed_line(line: dict[str, Any]) -> tuple[str, int] | tuple[str, int, int]:
    """A line as reviewed: its id and amount, and its quantity where the provider refunds
    by quantity (left out otherwise, so digests of amount-only lines never change)."""
    if line.get("quantity") is None:
        return str(line["line_id"]), int(line["amount"])
    return str(line["line_id"]), int(line["amount"]), int(line["quantity"])
