"""The offline drafter's own words meet the same check as Claude's, in every language the
chat speaks: were they refused, every reply of the rules would open with the fallback."""

from __future__ import annotations

from dataclasses import replace

import pytest
from drafting_support import aprons_order, basket_order, brief_from

from app.conversations.free_text import check_free_text
from app.conversations.language import SUPPORTED
from app.drafting.offline import OfflineDrafter

MESSAGES = [
    ["One of the two aprons arrived torn."],
    ["Where is my order?"],
    ["I'd like to talk to a person."],
    ["My order arrived damaged."],
    ["Hello"],
]


@pytest.mark.parametrize("locale", SUPPORTED)
@pytest.mark.parametrize("texts", MESSAGES)
def test_the_rules_own_words_pass_the_check_in_the_customers_language(
    locale: str, texts: list[str]
) -> None:
    aprons = aprons_order()
    for verified in (True, False):
        brief = replace(
            brief_from(texts, [aprons, basket_order()], chosen=aprons, verified=verified),
            locale=locale,
        )

        draft = OfflineDrafter().draft(brief)

        assert draft.free_text
        assert check_free_text(draft.free_text).passed, draft.free_text
