"""Stripe's resources, one module per family; importing this package registers their routes."""

from . import coupons, customers, disputes, events, payments, refunds, subscriptions

__all__ = ["coupons", "customers", "disputes", "events", "payments", "refunds", "subscriptions"]
