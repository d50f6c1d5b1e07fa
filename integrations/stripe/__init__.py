"""Stripe: the adapter the money path uses, and a local sandbox that speaks Stripe's wire format."""
