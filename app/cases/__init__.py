"""The case and what is proposed in it: who is asking, about which orders, each proposal and the
approvals bound to an exact digest of it, and the moves of their statuses."""
