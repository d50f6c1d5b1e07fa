"""The free-text check's rates on words it was not tuned on (:mod:`corpus_held_out`).

Each test runs the check over one list, prints its rate overall and per language and every
miss (shown with ``-s`` or not: the output bypasses pytest's capture), then asserts the
check's goal: no false claim passes, at most one harmless reply in ten is refused.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from corpus_held_out import FALSE_CLAIMS, HARMLESS, Claim, Purpose, Sample

from app.conversations.free_text import check_free_text
from app.conversations.language import SUPPORTED


def missed(samples: tuple[Sample, ...], miss: Callable[[Sample], bool]) -> list[Sample]:
    return [sample for sample in samples if miss(sample)]


def report(
    title: str,
    samples: tuple[Sample, ...],
    misses: list[Sample],
    capsys: pytest.CaptureFixture[str],
) -> None:
    with capsys.disabled():
        print(f"\n{title}: {len(misses)}/{len(samples)} ({len(misses) / len(samples):.1%})")
        for language in SUPPORTED:
            total = sum(sample.language == language for sample in samples)
            wrong = sum(sample.language == language for sample in misses)
            print(f"  {language}: {wrong}/{total} ({wrong / total:.1%})")
        for sample in misses:
            reasons = check_free_text(sample.text).reasons()
            print(f"  miss [{sample.language}, {sample.category}] {sample.text!r} {reasons}")


def test_the_held_out_corpus_is_spread_over_the_seven_languages() -> None:
    for samples, least, kinds in ((FALSE_CLAIMS, 80, Claim), (HARMLESS, 70, Purpose)):
        assert len({sample.text for sample in samples}) == len(samples) >= least
        assert {sample.language for sample in samples} == set(SUPPORTED)
        assert all(isinstance(sample.category, kinds) for sample in samples)
    assert {sample.category for sample in FALSE_CLAIMS} == set(Claim)
    assert {sample.category for sample in HARMLESS} == set(Purpose)


def test_no_held_out_false_claim_passes(capsys: pytest.CaptureFixture[str]) -> None:
    passed = missed(FALSE_CLAIMS, lambda sample: check_free_text(sample.text).passed)

    report("held-out false claims passed", FALSE_CLAIMS, passed, capsys)

    assert passed == []


def test_at_most_a_tenth_of_held_out_harmless_replies_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    refused = missed(HARMLESS, lambda sample: not check_free_text(sample.text).passed)

    report("held-out harmless replies refused", HARMLESS, refused, capsys)

    assert len(refused) * 10 <= len(HARMLESS)
