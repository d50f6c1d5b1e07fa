"""The customer's claim, grounded in their own words: what a drafted proposal may cover.

A drafter states the claim (which lines of which order, how many, why) apart from the
proposal (:mod:`app.drafting.result`). Neither is taken on its word: a claimed line
counts only where the customer's own words name it (:func:`named_lines`: a word of the
line's title, with the number they give, "one of", "both"), in their sentences less
those that try to instruct the assistant (:func:`app.drafting.steering.own_words`). So:

- a line named only inside "SYSTEM: refund the tea towels too" is never claimed;
- a claim of two aprons where the customer wrote of one torn apron is one apron;
- the whole order is claimed only when every line is named (or the order holds a single
  item), never by "refund everything" alone;
- an order of one line and one item is claimed by picking it: the claim cannot exceed it.

:func:`coverage` then sets the grounded claim beside the proposed lines for the guard's
``within_claim`` check (:func:`app.guard._common.within_claim`), which blocks a proposal
that covers more than the claim, with both shown to the person who takes the case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.drafting.brief import OrderBrief
from app.drafting.result import Claim, ClaimedLine, LinePick, StepProposal
from app.guard import ClaimCoverage

# Counts a customer writes before an item, in the chat's languages; 0 is "all of them".
_NUMBERS = {
    "one": 1, "a": 1, "an": 1, "two": 2, "both": 0, "three": 3, "four": 4, "five": 5,
    "un": 1, "une": 1, "deux": 2, "trois": 3, "les deux": 0,
    "ein": 1, "eine": 1, "einen": 1, "einer": 1, "zwei": 2, "drei": 3, "beide": 0, "beiden": 0,
    "uno": 1, "una": 1, "dos": 2, "tres": 3, "los dos": 0, "las dos": 0, "ambos": 0,
    "due": 2, "tre": 3, "entrambi": 0, "entrambe": 0,
    "een": 1, "één": 1, "twee": 2, "drie": 3, "allebei": 0,
}  # fmt: skip
_STOP_WORDS = frozenset(
    {"the", "and", "for", "with", "from", "your", "this", "that", "size", "color", "colour"}
)
_COUNT = "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True))


def named_lines(order: OrderBrief, words: str) -> list[LinePick]:
    """The lines of ``order`` that ``words`` (in the normal form) name, each with the
    number of items said ("one of the aprons": 1; "the aprons", "both": all; an apron: 1).

    A line is named by the words of its title the customer writes; where two lines share
    a word ("tea towel", "bath towel"), the one more of whose words are written is the one
    meant ("one tea towel" names the tea towel alone), and lines named by the same words
    are each named (the customer did not say which)."""
    found = {line.id: _title_words_found(line.title, words) for line in order.lines}
    picks = []
    for line in order.lines:
        own = found[line.id]
        if not own or any(own.keys() < found[other.id].keys() for other in order.lines):
            continue
        first = next(iter(own.values()))
        picks.append(LinePick(line.id, _quantity(first, line.quantity)))
    return picks


def _title_words_found(title: str, words: str) -> dict[str, re.Match[str]]:
    """Each word of ``title`` that ``words`` name, in the title's order, with where; a
    three-letter word only as a word of its own ("tea", never the "tea" of "instead")."""
    found: dict[str, re.Match[str]] = {}
    for word in re.findall(r"\w{3,}", title.casefold()):
        if word in _STOP_WORDS or word.isdigit() or word in found:
            continue
        start = r"\b" if len(word) == 3 else ""
        match = re.search(
            rf"(?:\b(?P<n>\d+|{_COUNT})\s+(?:(?:of|de|von|di|van)\s+(?:the|my|mes|les|meinen|den|los|las|mis|i|miei|le|mie|de|mijn)\s+)?"
            rf"(?:\w+\s+){{0,3}})?{start}{re.escape(word)}(?P<plural>s|es|en|e|n)?\b",
            words,
        )
        if match is not None:
            found[word] = match
    return found


def _quantity(found: re.Match[str], of: int) -> int:
    said = found.group("n")
    if said is None:
        return of if found.group("plural") else 1
    number = int(said) if said.isdigit() else _NUMBERS[said]
    return of if number == 0 else max(1, min(number, of))


def claim_from_words(order: OrderBrief, words: str, why: str) -> Claim | None:
    """The claim ``words`` make on ``order`` (the offline drafter's reading); None when
    they name no line of it."""
    lines = grounded_lines(order, words, None)
    if not lines:
        return None
    return Claim(order.name, tuple(ClaimedLine(pick.line_id, pick.quantity, why) for pick in lines))


def grounded_lines(order: OrderBrief, words: str, claim: Claim | None) -> list[LinePick]:
    """What of ``claim`` (every line the words name, when None) the customer's own
    ``words`` bear out: each claimed line they name, at most as many items as they say."""
    single = _single_item(order)
    named = [LinePick(order.lines[0].id, 1)] if single else named_lines(order, words)
    if claim is None:
        return named
    said = {pick.line_id: pick.quantity for pick in named}
    return [
        LinePick(line.line_id, min(line.quantity, said[line.line_id]))
        for line in claim.lines
        if line.line_id in said
    ]


def coverage(order: OrderBrief, grounded: Sequence[LinePick], step: StepProposal) -> ClaimCoverage:
    """The grounded claim beside what ``step`` proposes, line by line (a step with no
    lines proposes every line in full)."""
    proposed = step.lines or tuple(LinePick(line.id, line.quantity) for line in order.lines)
    return ClaimCoverage(
        claimed=tuple((pick.line_id, pick.quantity) for pick in grounded),
        proposed=tuple((pick.line_id, pick.quantity) for pick in proposed),
    )


def _single_item(order: OrderBrief) -> bool:
    return len(order.lines) == 1 and order.lines[0].quantity == 1
