"""How sure we are who the customer is, as an ordered level."""

from __future__ import annotations

from enum import StrEnum

from app.words import Sentence, said


class IdentityLevel(StrEnum):
    """Ordered: ``none`` < ``claim`` < ``medium`` < ``strong``.

    Comparisons use the order of trust, not the alphabet, so ``level >= minimum``
    reads as it should, also against a level's plain string (``level >= "medium"``);
    any other string is refused rather than compared alphabetically.
    """

    NONE = "none"
    CLAIM = "claim"  # an order number typed into chat: a claim, not identity
    MEDIUM = "medium"  # the helpdesk sender's email matches the order's email
    STRONG = "strong"  # logged-in storefront customer, or a one-time code to the order email

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def description(self) -> Sentence:
        """What the level means, for reasons a support agent reads."""
        return _DESCRIPTION[self]

    def __lt__(self, other: object) -> bool:
        return self.rank < _rank_of(other)

    def __le__(self, other: object) -> bool:
        return self.rank <= _rank_of(other)

    def __gt__(self, other: object) -> bool:
        return self.rank > _rank_of(other)

    def __ge__(self, other: object) -> bool:
        return self.rank >= _rank_of(other)


def _rank_of(other: object) -> int:
    # Raising (not NotImplemented) keeps Python from falling back to str's alphabetical order.
    if isinstance(other, str) and other in IdentityLevel._value2member_map_:
        return IdentityLevel(other).rank
    raise TypeError(f"cannot compare an identity level with {other!r}")


_RANK = {level: rank for rank, level in enumerate(IdentityLevel)}
_DESCRIPTION = {
    IdentityLevel.NONE: said("not identified"),
    IdentityLevel.CLAIM: said("an order number typed into chat"),
    IdentityLevel.MEDIUM: said("the helpdesk sender's email matches the order's email"),
    IdentityLevel.STRONG: said(
        "a logged-in storefront customer or a one-time code sent to the order's email"
    ),
}
