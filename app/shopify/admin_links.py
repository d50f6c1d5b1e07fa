"""Addresses of Caseward's pages inside a shop's Shopify admin."""

from __future__ import annotations

import uuid

# The app's handle in the admin's addresses (``shopify.app.toml``).
APP_HANDLE = "caseward"


def admin_case_url(admin_origin: str, shop_domain: str, case_id: uuid.UUID) -> str:
    """Where a person opens the case inside the shop's Shopify admin (to approve it)."""
    store = shop_domain.removesuffix(".myshopify.com")
    return f"{admin_origin}/store/{store}/apps/{APP_HANDLE}/app/cases/{case_id}"
