"""Where the browser tests keep their screenshots: where the docs show them when they are
renewed (``CASEWARD_SCREENSHOTS=1``), else in a temporary folder, so that an ordinary run
leaves the checkout as it was."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"


def screenshot_folder(kept: Path = DOCS) -> Path:
    """``kept`` when screenshots are being renewed, else a temporary folder."""
    if os.environ.get("CASEWARD_SCREENSHOTS") == "1":
        return kept
    return Path(tempfile.gettempdir()) / "caseward-screenshots"
