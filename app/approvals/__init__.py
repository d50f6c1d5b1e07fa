"""Proposals and the approvals bound to an exact digest of them."""
