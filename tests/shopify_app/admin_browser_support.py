"""The embedded admin in the browser tests: Polaris' tokens as its stylesheet declares
them, the app's pages in the stand-in admin's left navigation, and axe-core in the app's
frame, loaded and run in one evaluation once the frame has loaded (App Bridge's token
reload may replace the page just after it shows), on a page whose browser context bypasses
the admin's CSP."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Locator

AXE = Path(__file__).resolve().parents[2] / "widget" / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """async (source) => {
    if (typeof axe === "undefined") (0, eval)(source);
    const only = { type: "tag", values: ["wcag2a", "wcag2aa"] };
    const results = await axe.run(document, { runOnly: only });
    return results.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" ")),
    }));
}"""


def admin_nav(page: object) -> Locator:
    """The app's pages in the admin's own navigation (App Bridge's ``ui-nav-menu``, drawn
    by the stand-in admin beside the frame): a link there opens the page in the frame."""
    from playwright.sync_api import Page  # noqa: PLC0415

    assert isinstance(page, Page)
    return page.get_by_role("navigation", name="Caseward")


def axe_violations(page: object) -> list[dict[str, object]]:
    """axe-core's violations on the app's frame as it stands, once it has loaded: loaded
    and run in one evaluation, so a late reload of the frame (App Bridge's token dance)
    cannot leave the page without it."""
    from playwright.sync_api import Error, Page  # noqa: PLC0415

    assert isinstance(page, Page)
    if not AXE.is_file():
        pytest.fail("axe-core is not installed (widget/node_modules): run `make install`")
    for attempt in range(3):
        frame = page.frame(name="app-iframe")
        assert frame is not None
        frame.wait_for_load_state("load")
        try:
            violations: list[dict[str, object]] = frame.evaluate(RUN_AXE, AXE.read_text())
        except Error:
            if attempt == 2:
                raise
            continue  # the frame navigated meanwhile: read the page it landed on
        return violations
    raise AssertionError("unreachable")


def serious(violations: list[dict[str, object]], where: str) -> list[dict[str, object]]:
    """The serious and critical violations; every violation is printed with ``where``."""
    for violation in violations:
        print(f"axe, {where}: {violation}")
    return [v for v in violations if v["impact"] in ("serious", "critical")]


POLARIS_CSS = Path(__file__).resolve().parents[2] / "app" / "static" / "polaris.css"
# The app's pages, as its navigation lists them.
APP_PAGES = ["Today", "Cases", "Settings", "Audit log", "History check"]


def polaris_tokens() -> dict[str, str]:
    """Polaris' light theme tokens, as its stylesheet declares them. Without the file (it
    is copied from the npm package at install) the test skips, or fails in strict mode."""
    if not POLARIS_CSS.is_file():
        pytest.skip(f"{POLARIS_CSS} is missing: `make install` copies it from widget/node_modules")
    found = re.search(r":root,\.p-theme-light\{([^}]*)\}", POLARIS_CSS.read_text())
    assert found is not None, "Polaris' stylesheet declares no light theme"
    return dict(re.findall(r"(--p-[a-z0-9-]+):([^;]+)", found.group(1)))


def rgba(colour: str) -> tuple[float, ...]:
    """``rgb(1, 2, 3)`` or ``rgba(1, 2, 3, 1)`` as four numbers, alpha 1 when left out."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", colour)]
    assert colour.startswith("rgb") and len(numbers) in (3, 4), colour
    return tuple(numbers + [1.0] * (4 - len(numbers)))
