"""Conversations on every channel, who the shopper is, and what they are told."""
