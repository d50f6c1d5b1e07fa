"""How sure we are who the customer is, as an ordered level."""

from __future__ import annotations

from enum import StrEnum


class IdentityLevel(StrEnum):
    """Ordered: ``none`` < ``claim`` < ``medium`` < ``strong``.

    Comparisons use the order of trust, not the alphabet, so ``level >= minimum``
    reads as it should. Comparing with a plain string is refused rather than
    falling back to ``str`` ordering.
    """

    NONE = "none"
    CLAIM = "claim"  # an order number typed into chat: a claim, not identity
    MEDIUM = "medium"  # the helpdesk sender's email matches the order's email
    STRONG = "strong"  # logged-in storefront customer, or a one-time code to the order email

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def description(self) -> str:
        """What the level means, for reasons a support agent reads."""
        return _DESCRIPTION[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, IdentityLevel):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, IdentityLevel):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, IdentityLevel):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, IdentityLevel):
            return NotImplemented
        return self.rank >= other.rank


_RANK = {level: rank for rank, level in enumerate(IdentityLevel)}
_DESCRIPTION = {
    IdentityLevel.NONE: "not identified",
    IdentityLevel.CLAIM: "an order number typed into chat",
    IdentityLevel.MEDIUM: "the helpdesk sender's email matches the order's email",
    IdentityLevel.STRONG: (
        "a logged-in storefront customer or a one-time code sent to the order's email"
    ),
}
