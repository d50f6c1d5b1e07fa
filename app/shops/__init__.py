"""Shops: the tenant every other record belongs to."""
