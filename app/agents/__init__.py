"""Agents: automated parties with their own revocable credential; they propose, never approve."""
