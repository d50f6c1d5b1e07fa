"""Caseward as a Shopify app: the install, its tokens, and the staff who reach it."""
