"""Shopify: request verification, tokens, the Admin GraphQL client, and a local sandbox."""
