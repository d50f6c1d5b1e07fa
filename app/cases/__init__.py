"""The case file: who is asking, about which orders, and what has happened so far."""
