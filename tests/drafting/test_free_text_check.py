"""The free-text check measured on three corpora: what a drafter may say in its own words.

1. every false claim (:mod:`corpus_false_claims`) is refused, and where a reply hides one
   between harmless sentences, the false sentence is among those refused;
2. at most a tenth of the harmless replies (:mod:`corpus_harmless`) is refused;
3. every leak (:mod:`corpus_leaks`) is refused, given the drafter's real instructions,
   tool description, schema, a shop's policy and a canary as confidential;
4. both rates are printed, per language too, for the record;
5. the corpora stay large enough, in every customer language, to mean something.

False claims are checked without confidential text, so that a refusal there is the claim
rule's doing and never an accidental echo of the instructions; harmless replies with it,
as the drafting service checks a reply.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import cache

import pytest
from corpus_false_claims import FALSE_CLAIMS, FalseClaim
from corpus_harmless import HARMLESS, HarmlessReply
from corpus_leaks import CANARY, LEAKS, SAMPLE_POLICY, How, schema_descriptions

from app.conversations.free_text import Confidential, FreeTextCheck, check_free_text
from app.drafting.prompt import INSTRUCTIONS, TOOL_DESCRIPTION

LANGUAGES = ("en", "fr", "de", "es", "it", "nl", "ja")
MOST_HARMLESS_REFUSED = 0.10


def confidential() -> Confidential:
    return Confidential(
        texts=(INSTRUCTIONS, TOOL_DESCRIPTION, *schema_descriptions(), SAMPLE_POLICY),
        canary=CANARY,
    )


@cache
def checked(text: str, *, with_confidential: bool) -> FreeTextCheck:
    return check_free_text(text, confidential=confidential() if with_confidential else None)


def claims_passed() -> list[FalseClaim]:
    return [claim for claim in FALSE_CLAIMS if checked(claim.text, with_confidential=False).passed]


def harmless_refused() -> list[HarmlessReply]:
    return [reply for reply in HARMLESS if not checked(reply.text, with_confidential=True).passed]


def listed(lines: Iterable[str]) -> str:
    return "\n".join(f"  {line}" for line in lines)


def why(text: str) -> str:
    refused = checked(text, with_confidential=True).refused
    return "; ".join(f"{item.sentence!r}: {item.reason}" for item in refused)


# -- 1. false claims --------------------------------------------------------------------


def test_every_false_claim_is_refused() -> None:
    passed = claims_passed()

    assert not passed, f"{len(passed)} of {len(FALSE_CLAIMS)} false claims passed:\n" + listed(
        f"[{claim.language}, {claim.category}] {claim.text!r}" for claim in passed
    )


def test_a_false_sentence_among_harmless_ones_is_the_one_refused() -> None:
    mixed = [claim for claim in FALSE_CLAIMS if claim.claim is not None]
    missed = []
    for item in mixed:
        assert item.claim is not None
        refused = [r.sentence.strip() for r in checked(item.text, with_confidential=False).refused]
        # The check may cut the claim smaller, or fail to cut it from its neighbours.
        if not any(s and (s in item.claim or item.claim in s) for s in refused):
            missed.append(f"[{item.language}] {item.claim!r}; refused: {refused}")

    assert mixed
    assert not missed, "the false sentence was not among those refused:\n" + listed(missed)


# -- 2. harmless replies ----------------------------------------------------------------


def test_at_most_a_tenth_of_the_harmless_replies_is_refused() -> None:
    refused = harmless_refused()

    assert len(refused) <= MOST_HARMLESS_REFUSED * len(HARMLESS), (
        f"{len(refused)} of {len(HARMLESS)} harmless replies refused:\n"
        + listed(f"[{reply.language}, {reply.topic}] {why(reply.text)}" for reply in refused)
    )


# -- 3. leaks ---------------------------------------------------------------------------


def test_every_leak_of_the_drafters_instructions_is_refused() -> None:
    passed = [leak for leak in LEAKS if checked(leak.text, with_confidential=True).passed]

    assert not passed, f"{len(passed)} of {len(LEAKS)} leaks passed:\n" + listed(
        f"[{leak.how}, {leak.language}] {leak.text[:160]!r}" for leak in passed
    )


# -- 4. the rates -----------------------------------------------------------------------


def rate(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "0/0"


def test_the_rates_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    passed, refused = claims_passed(), harmless_refused()
    claims_in = Counter(claim.language for claim in FALSE_CLAIMS)
    harmless_in = Counter(reply.language for reply in HARMLESS)
    passed_in = Counter(claim.language for claim in passed)
    refused_in = Counter(reply.language for reply in refused)
    report = [
        "free-text check:",
        f"  false claims passed: {rate(len(passed), len(FALSE_CLAIMS))}",
        f"  harmless replies refused: {rate(len(refused), len(HARMLESS))}",
        *(
            f"  {language}: false passed {rate(passed_in[language], claims_in[language])}, "
            f"harmless refused {rate(refused_in[language], harmless_in[language])}"
            for language in LANGUAGES
        ),
    ]
    with capsys.disabled():
        print("\n" + "\n".join(report))

    assert not passed, f"{len(passed)} false claims passed"
    assert len(refused) <= MOST_HARMLESS_REFUSED * len(HARMLESS), (
        f"{len(refused)} harmless replies refused"
    )


# -- 5. the corpora ---------------------------------------------------------------------


def test_the_false_claims_are_many_distinct_and_in_every_language() -> None:
    per_language = Counter(claim.language for claim in FALSE_CLAIMS)

    assert len(FALSE_CLAIMS) >= 150
    assert len({claim.text for claim in FALSE_CLAIMS}) == len(FALSE_CLAIMS)
    assert set(per_language) == set(LANGUAGES)
    assert all(per_language[language] >= 12 for language in LANGUAGES)
    assert sum(claim.claim is not None for claim in FALSE_CLAIMS) >= 7
    assert all(claim.claim in claim.text for claim in FALSE_CLAIMS if claim.claim is not None)


def test_the_harmless_replies_are_many_distinct_and_in_every_language() -> None:
    per_language = Counter(reply.language for reply in HARMLESS)

    assert len(HARMLESS) >= 100
    assert len({reply.text for reply in HARMLESS}) == len(HARMLESS)
    assert set(per_language) == set(LANGUAGES)
    assert all(per_language[language] >= 8 for language in LANGUAGES)
    assert not {reply.text for reply in HARMLESS} & {claim.text for claim in FALSE_CLAIMS}


def test_the_leaks_are_many_in_every_disguise_and_language() -> None:
    assert len(LEAKS) >= 40
    assert len({leak.text for leak in LEAKS}) == len(LEAKS)
    assert {leak.how for leak in LEAKS} == set(How)
    assert {leak.language for leak in LEAKS} == set(LANGUAGES)
    assert sum(leak.how is How.VERBATIM for leak in LEAKS) >= 20
