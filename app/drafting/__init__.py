"""Drafting a case: the brief, the drafters, the claim, and the reply composed from facts."""
