"""Staff access: members of a shop, their roles and limits, and revocable API tokens."""
