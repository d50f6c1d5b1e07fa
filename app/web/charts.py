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
class Chart:
    title: str
    bars: list[DrawnBar]
    width: int = WIDTH
    height: int = HEIGHT
    baseline: int = BASELINE

    @property
    def described(self) -> str:
        """The title and every value, for the image's label."""
        values = "; ".join(f"{drawn.bar.label}: {drawn.bar.shown}" for drawn in self.bars)
        return f"{self.title}. {values}"


def bar_chart(bars: Sequence[Bar], *, title: str) -> Chart:
    """``bars`` as columns, scaled to the largest; a chart of nothing draws an empty axis."""
    top = max((bar.value for bar in bars), default=0) or 1
    slot = WIDTH / max(len(bars), 1)
    drawn = []
    for n, bar in enumerate(bars):
        height = BASELINE * bar.value / top
        drawn.append(DrawnBar(bar, n * slot + slot * 0.15, BASELINE - height, slot * 0.7, height))
    return Chart(title, drawn)
