"""How Caseward's own processes write their records: plain lines on stderr, one record a
line (a traceback after it), as gunicorn writes its own, for whatever collects them."""

from __future__ import annotations

import logging

FORMAT = "[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s"


def log_plainly() -> None:
    """Records at INFO and above as plain lines on stderr, unless the process's logging is
    set up already (then this changes nothing)."""
    logging.basicConfig(level=logging.INFO, format=FORMAT)
