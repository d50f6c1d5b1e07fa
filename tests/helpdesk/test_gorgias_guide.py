"""docs/gorgias.md sets up the HTTP integration as Caseward is tested with it: the triggers
the demo, the case bench and the story tests set up, and the body they send."""

from __future__ import annotations

import re
from pathlib import Path

from app.helpdesk.events import CALL_BODY_TEMPLATE, CALL_TRIGGERS

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "gorgias.md"


def _integration_step() -> str:
    """The guide's step that sets up the HTTP integration, its whitespace made single."""
    guide = GUIDE.read_text(encoding="utf-8")
    step = guide[guide.index("**The HTTP integration.**") : guide.index("**The sidebar widget.**")]
    return " ".join(step.split())


def test_the_guide_asks_for_the_triggers_caseward_is_tested_with() -> None:
    asked = re.findall(r"triggers (.*?), and this body", _integration_step())
    assert len(asked) == 1, asked
    triggers = re.findall(r"\*([a-z ]+)\*", asked[0])

    assert triggers == [trigger.replace("-", " ") for trigger in CALL_TRIGGERS]


def test_the_guide_s_body_is_the_one_caseward_reads() -> None:
    assert " ".join(CALL_BODY_TEMPLATE.split()) in _integration_step()
