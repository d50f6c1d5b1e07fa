"""The storefront chat widget's own words (its buttons, fields and notices), in the
shopper's language.

The widget (``widget/extension/assets/caseward-chat.js``) is written with English words
and takes these over from each chat answer (``labels`` in the chat's JSON), so the
catalogue that says Caseward's sentences to the shopper also labels the widget. A label
the widget fills in itself keeps its ``%(name)s`` placeholder: the widget replaces it
(the email hint, the case's reference and status, the seconds to wait).
"""

from __future__ import annotations

from functools import cache

from app.conversations.language import for_customer
from app.words import said

# By the widget's name for each; the widget keeps the same English as its fallback.
LABELS = {
    "open": said("Chat with us"),
    "title": said("Chat with us"),
    "close": said("Close chat"),
    "conversation": said("Conversation"),
    "you": said("You"),
    "shop": said("Shop"),
    "message": said("Your message"),
    "send": said("Send"),
    "person": said("Talk to a person"),
    "verify": said("Verify it's you"),
    "verifyIntro": said(
        "To talk about an order, confirm its number and the email it was placed with."
    ),
    "order": said("Order number"),
    "email": said("Email"),
    "sendCode": said("Send me a code"),
    "sentTo": said("We sent a code to %(to)s."),
    "yourEmail": said("the order's email"),
    "code": said("Six-digit code"),
    "checkCode": said("Verify"),
    "otherOrder": said("Use another order or email"),
    "verified": said("You're verified."),
    "yourCase": said("Your case"),
    "caseHeading": said("Case %(reference)s: %(status)s"),
    # Two or more seconds: every supported language's plural reads the same from two on.
    "wait": said("We're busy right now. Please wait: we'll try again in %(seconds)s seconds."),
    "waitOne": said("We're busy right now. Please wait: we'll try again in a second."),
    "later": said("We're still busy. Please try again in a minute."),
    "unreachable": said("We couldn't reach the shop just now. Please try again in a moment."),
}


@cache
def labels(locale: str) -> dict[str, str]:
    """The widget's words in ``locale`` (a :func:`~app.conversations.language.customer_locale`)."""
    return {name: for_customer(sentence, locale) for name, sentence in LABELS.items()}
