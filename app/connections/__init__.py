"""Provider connections: which account a shop's actions go to, with which key."""
