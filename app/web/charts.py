"""Small charts drawn on the server as SVG (``templates/admin/_chart.html``), readable
without a script.

A chart is an image labelled with its title and every value, and each bar carries its own
label and value as a tooltip: a screen reader reads the numbers, not the shapes. No
library: a column of bars is a few rectangles, and the pages send no script they do not
need. This module only measures; the template draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 560, 160
# Room under the bars for the labels.
LABELS = 20
BASELINE = HEIGHT - LABELS


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    shown: str  # the value as people read it: "3", "$48.00"


@dataclass(frozen=True)
class DrawnBar:
    bar: Bar
    x: float
    y: float
    width: float
    height: float

    @property
    def middle(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class DrawnLimit:
    """A line across the columns at a limit's height (a cap), labelled with it."""

    limit: Bar
    y: float


@dataclass(frozen=True)
class Chart:
    title: str
    bars: list[DrawnBar]
    limit: DrawnLimit | None = None
    width: int = WIDTH
    height: int = HEIGHT
    baseline: int = BASELINE

    @property
    def described(self) -> str:
        """The title, the limit and every value, for the image's label."""
        values = "; ".join(f"{drawn.bar.label}: {drawn.bar.shown}" for drawn in self.bars)
        if self.limit is not None:
            values = f"{self.limit.limit.label}: {self.limit.limit.shown}; {values}"
        return f"{self.title}. {values}"


def bar_chart(bars: Sequence[Bar], *, title: str, limit: Bar | None = None) -> Chart:
    """``bars`` as columns, scaled to the largest (or to ``limit``, drawn as a line, when
    it is higher); a chart of nothing draws an empty axis."""
    values = [bar.value for bar in bars] + ([limit.value] if limit else [])
    # Room above the highest for the limit's label.
    top = (max(values, default=0) or 1) * (1.15 if limit else 1)
    slot = WIDTH / max(len(bars), 1)
    drawn = []
    for n, bar in enumerate(bars):
        height = BASELINE * bar.value / top
        drawn.append(DrawnBar(bar, n * slot + slot * 0.15, BASELINE - height, slot * 0.7, height))
    line = DrawnLimit(limit, BASELINE - BASELINE * limit.value / top) if limit else None
    return Chart(title, drawn, line)
