"""Executing approved actions exactly once, and finding out what really happened."""
