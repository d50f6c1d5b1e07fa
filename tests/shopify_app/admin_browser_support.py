"""axe-core in the embedded admin's frame, for the browser tests: loaded and run in one
evaluation once the frame has loaded (App Bridge's token reload may replace the page just
after it shows), on a page whose browser context bypasses the admin's CSP."""

from __future__ import annotations

from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "widget" / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """async (source) => {
    if (typeof axe === "undefined") (0, eval)(source);
    const only = { type: "tag", values: ["wcag2a", "wcag2aa"] };
    const results = await axe.run(document, { runOnly: only });
    return results.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" ")),
    }));
}"""


def axe_violations(page: object) -> list[dict[str, object]]:
    """axe-core's violations on the app's frame as it stands, once it has loaded: loaded
    and run in one evaluation, so a late reload of the frame (App Bridge's token dance)
    cannot leave the page without it."""
    from playwright.sync_api import Error, Page  # noqa: PLC0415

    assert isinstance(page, Page)
    if not AXE.is_file():
        pytest.fail("axe-core is not installed (widget/node_modules): run `npm ci --prefix widget`")
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
