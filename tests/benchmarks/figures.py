"""Where each benchmark keeps its latest figures, for docs/performance.md and its plots.

A benchmark ends with ``record("money_path", {...})``: the figures it printed, as plain JSON
(numbers, strings, lists and objects), with the command that made them and when, in
``docs/performance/<name>.json``. ``plots.py`` draws the page's pictures from those files
alone, so a plot always shows the run its file names.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import timeit
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIGURES = Path(__file__).resolve().parents[2] / "docs" / "performance"


def command_line() -> str:
    """The command that ran this benchmark, as a reader of the docs would type it."""
    script = Path(sys.argv[0]).resolve()
    try:
        shown = script.relative_to(FIGURES.parents[1])
    except ValueError:
        shown = Path(script.name)
    return shlex.join([".venv/bin/python", str(shown), *sys.argv[1:]])


def loop_microseconds() -> float:
    """How fast the machine runs Python just now (a shared machine's speed varies by hours,
    and every figure of time with it): the quickest of five loops of 1,000 additions."""
    return min(timeit.repeat("s = 0\nfor i in range(1000): s += i", number=1000, repeat=5)) * 1000


def machine() -> dict[str, Any]:
    """What the figures were taken on: cores, the load average and the machine's speed (a
    loop of 1,000 additions, in µs) as the run ended."""
    load = os.getloadavg()
    return {
        "cores": os.cpu_count(),
        "load_average": [round(value, 2) for value in load],
        "loop_of_1000_additions_us": round(loop_microseconds(), 1),
    }


def record(name: str, figures: dict[str, Any]) -> Path:
    """Keep ``figures`` as the latest run of benchmark ``name``; returns the file written."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.json"
    kept = {
        "benchmark": name,
        "command": command_line(),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "figures": figures,
    }
    path.write_text(json.dumps(kept, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    print(f"figures kept in {path.relative_to(FIGURES.parents[1])}")
    return path
