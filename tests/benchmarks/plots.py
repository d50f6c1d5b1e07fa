"""Draw docs/performance's pictures from the figures the benchmarks kept.

Each benchmark keeps its latest run in ``docs/performance/<name>.json``
(:mod:`figures`); this draws one SVG per figure from those files alone, each titled with
the goal it is held to and footed with the command and the time of the run behind it. A
benchmark whose file is missing is skipped and named, so a plot never outlives its data:

    .venv/bin/python tests/benchmarks/plots.py

The SVGs are written without a date and with a fixed hash salt, so drawing unchanged
figures again changes no file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

FIGURES = Path(__file__).resolve().parents[2] / "docs" / "performance"
GOAL = {"color": "#b42318", "linestyle": "--", "linewidth": 1.2}
plt.rcParams.update(
    {"svg.hashsalt": "caseward", "svg.fonttype": "none", "font.size": 9}
    | {"axes.spines.top": False}
    | {"axes.spines.right": False, "figure.dpi": 100}
)


def kept(name: str) -> dict[str, Any] | None:
    path = FIGURES / f"{name}.json"
    if not path.exists():
        return None
    run: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return run


def save(figure: Figure, run: dict[str, Any], name: str) -> None:
    """Foot the picture with the command and time of its run, and write ``<name>.svg``."""
    machine = run["machine"]
    load = ", ".join(f"{value:g}" for value in machine["load_average"])
    # Runs kept before the machine's speed was recorded have no loop time.
    loop = machine.get("loop_of_1000_additions_us")
    speed = f", a loop of 1,000 additions {loop:g} µs" if loop is not None else ""
    figure.text(
        0.01,
        0.005,
        f"{run['command']}  ·  {run['finished_at']}  ·  "
        f"{machine['cores']} cores, load {load}{speed}",
        fontsize=6.5,
        color="#555555",
    )
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    figure.savefig(FIGURES / f"{name}.svg", format="svg", metadata={"Date": None})
    plt.close(figure)
    print(f"drew docs/performance/{name}.svg")


def labelled_bars(axes: Axes, labels: list[str], values: list[float], unit: str) -> None:
    bars = axes.bar(labels, values, color="#2c6ecb")
    axes.bar_label(bars, labels=[f"{value:,.1f} {unit}" for value in values], fontsize=7)


def money_path(run: dict[str, Any]) -> None:
    """The whole path beside a direct SDK call at each provider latency, stage by stage."""
    figures = run["figures"]
    floor, ratios = figures["floor"], figures["path_against_direct_call"]
    figure, panels = plt.subplots(1, len(ratios), figsize=(9, 3.6))
    for axes, (index, series) in zip(panels, enumerate(ratios), strict=True):
        bottom = 0.0
        for stage, medians in floor["stages_p50_ms"].items():
            value = medians[index]
            axes.bar(["Caseward: approval to status"], [value], bottom=bottom, label=stage)
            bottom += value
        axes.bar(["direct SDK refund"], [series["direct_p50_ms"]], color="#8a8a8a")
        axes.set_title(
            f"provider latency {series['latency_ms']} ms: {series['ratio']:.2f}x"
            + (" (goal at most 2.08x)" if series["latency_ms"] == 250 else ""),
            fontsize=9,
        )
        axes.set_ylabel("ms (p50)")
    panels[0].legend(fontsize=6.5, loc="upper right")
    figure.suptitle("The money path against Stripe, stage by stage")
    save(figure, run, "money_path")


def throughput(money: dict[str, Any] | None, scaling: dict[str, Any] | None) -> None:
    """Executed actions per second per worker count (the scaling run when there is one)."""
    run = scaling or money
    if run is None:
        return
    figure = plt.figure(figsize=(9, 3.4))
    if scaling is not None:
        series: dict[str, list[tuple[int, float]]] = {}
        for point in scaling["figures"]["throughput"]:
            label = f"provider latency {point['latency_ms']} ms"
            series.setdefault(label, []).append((point["workers"], point["actions_per_second"]))
    else:
        assert money is not None
        series = {
            "provider answering at once": [
                (point["workers"], point["actions_per_second"])
                for point in money["figures"]["throughput"]
            ]
        }
    # A panel a latency: at 250 ms the rates are a fiftieth of those at 0 ms.
    panels = figure.subplots(1, len(series), squeeze=False)[0]
    for axes, (label, points) in zip(panels, series.items(), strict=True):
        workers, rates = zip(*sorted(points), strict=True)
        axes.plot(workers, rates, marker="o", color="#2c6ecb")
        for count, rate in points:
            axes.annotate(f"{rate:.1f}", (count, rate), textcoords="offset points", xytext=(4, 4))
        axes.set_xlabel("RQ worker processes")
        axes.set_ylabel("executed actions a second")
        axes.set_xticks(sorted(count for count, _ in points))
        axes.set_ylim(bottom=0, top=max(rates) * 1.2)
        axes.set_title(label, fontsize=9)
    figure.suptitle("Executed actions a second by worker count")
    save(figure, run, "throughput")


def burst(run: dict[str, Any]) -> None:
    """The 500-approval burst against what Stripe's rate limit allows."""
    taken = run["figures"]["burst"]
    figure, axes = plt.subplots(figsize=(5, 2.8))
    labels = ["the limit's own pace", "Caseward's burst"]
    labelled_bars(axes, labels, [taken["limit_allows_seconds"], taken["seconds"]], "s")
    axes.axhline(taken["limit_allows_seconds"] * 1.2, **GOAL, label="goal: at most 1.2x")
    axes.set_ylabel("seconds")
    axes.legend(fontsize=7, loc="lower right")
    axes.set_title(f"{taken['approvals']} approvals at 25 requests/s: {taken['ratio']:.2f}x")
    save(figure, run, "burst")


def webhooks(run: dict[str, Any]) -> None:
    figures = run["figures"]
    points = figures["acknowledged_ms"]
    figure, axes = plt.subplots(figsize=(6, 3))
    labelled_bars(axes, list(points), list(points.values()), "ms")
    axes.axhline(50, **GOAL, label="goal: p99 at most 50 ms")
    axes.set_ylabel("ms from send to 200")
    axes.legend(fontsize=7)
    axes.set_title(
        f"Stripe webhooks acknowledged at {figures['rate_per_second']}/s "
        f"for {figures['seconds']} s ({figures['deliveries']:,} deliveries)"
    )
    save(figure, run, "webhooks")


def admin_pages(run: dict[str, Any]) -> None:
    figures = run["figures"]
    pages = figures["pages"]
    figure, axes = plt.subplots(figsize=(7, 3.4))
    bars = axes.barh([page["page"] for page in pages], [page["p95_ms"] for page in pages])
    axes.bar_label(bars, labels=[f"{page['p95_ms']:.1f} ms" for page in pages], fontsize=7)
    axes.axvline(figures["goal_p95_ms"], **GOAL)
    axes.invert_yaxis()
    axes.set_xlabel("server time, p95 (ms)")
    axes.set_title(
        f"Admin pages in a shop of {figures['cases']:,} cases "
        f"(dashed: the goal, p95 under {figures['goal_p95_ms']} ms)"
    )
    save(figure, run, "admin_pages")


def drafting(run: dict[str, Any]) -> None:
    figures = run["figures"]
    figure, (reply, tokens) = plt.subplots(1, 2, figsize=(9, 3.4))
    for row in figures["message_to_reply_kept_ms"]:
        own = row["p50"] - row["model_p50"]
        reply.bar([row["drafter"]], [row["model_p50"]], color="#8a8a8a")
        reply.bar([row["drafter"]], [own], bottom=[row["model_p50"]], color="#2c6ecb")
        reply.annotate(f"{row['p50']:,.0f} ms", (row["drafter"], row["p50"]), ha="center")
    reply.set_ylabel("message to reply kept, p50 (ms)")
    reply.set_title("The model (grey) and Caseward's own (blue)", fontsize=9)
    modes = figures["tokens_per_drafted_case"]["modes"]
    labelled_bars(tokens, [m["mode"] for m in modes], [m["billed"] for m in modes], "")
    tokens.set_ylabel("billed input tokens per drafted case")
    tokens.tick_params(axis="x", labelsize=7)
    tokens.set_title("Prompt caching", fontsize=9)
    figure.suptitle("Drafting")
    save(figure, run, "drafting")


def history(run: dict[str, Any]) -> None:
    scans = run["figures"]["scans"]
    figure, axes = plt.subplots(figsize=(6, 3))
    labels = [f"{scan['provider']}, {scan['records']:,} records" for scan in scans]
    shares = [100 * scan["used_per_second"] / scan["allowed_per_second"] for scan in scans]
    labelled_bars(axes, labels, shares, "%")
    axes.axhline(100, **GOAL, label="the provider's limit")
    axes.set_ylabel("share of the rate limit used (%)")
    axes.legend(fontsize=7, loc="lower right")
    axes.set_title("The history audit's scan against the providers' limits")
    save(figure, run, "history")


def load(run: dict[str, Any], name: str) -> None:
    """Per surface: requests a second and p50/p95/p99 of the answer."""
    surfaces = run["figures"]["surfaces"]
    figure, (rate, spread) = plt.subplots(1, 2, figsize=(10, 3.6))
    names = [surface["surface"] for surface in surfaces]
    labelled_bars(rate, names, [surface["per_second"] for surface in surfaces], "")
    rate.set_ylabel("requests a second")
    rate.tick_params(axis="x", labelsize=7, rotation=20)
    width = 0.27
    for offset, point in enumerate(("p50_ms", "p95_ms", "p99_ms")):
        positions = [index + (offset - 1) * width for index in range(len(names))]
        spread.bar(positions, [surface[point] for surface in surfaces], width, label=point[:3])
    spread.set_xticks(range(len(names)), names, fontsize=7, rotation=20)
    spread.set_ylabel("answer time (ms)")
    spread.set_yscale("log")
    spread.legend(fontsize=7)
    minutes = run["figures"].get("minutes")
    figure.suptitle(f"Every surface under load together for {minutes} minutes ({name})")
    save(figure, run, name)


def case_bench(run: dict[str, Any]) -> None:
    rows = run["figures"]["per_situation"]
    figure, axes = plt.subplots(figsize=(8, 3.8))
    names = [row["situation"] for row in rows]
    cases = [row["cases"] for row in rows]
    correct = [row["correct"] for row in rows]
    axes.barh(names, cases, color="#d0d0d0", label="cases")
    axes.barh(names, correct, color="#2c6ecb", label="resolved correctly")
    axes.invert_yaxis()
    axes.tick_params(axis="y", labelsize=7)
    axes.legend(fontsize=7, loc="lower right")
    axes.set_title(f"The case bench: {sum(cases)} cases by situation")
    save(figure, run, "case_bench")


DRAWN: dict[str, Callable[[dict[str, Any]], None]] = {
    "money_path": money_path,
    "money_path/burst": burst,
    "webhooks": webhooks,
    "shopify": admin_pages,
    "drafting": drafting,
    "history": history,
    "load": lambda run: load(run, "load"),
    "load_faults": lambda run: load(run, "load_faults"),
    "case_bench": case_bench,
}


def summary() -> None:
    """The page's table of every figure against its goal, as Markdown rows, from the kept
    runs (pasted into docs/performance.md with the plots, so the two always agree)."""
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, what: str, goal: str, latest: Callable[[dict[str, Any]], str]) -> None:
        run = kept(name)
        if run is not None:
            rows.append((what, goal, latest(run["figures"]), run["finished_at"][:16]))

    def path(f: dict[str, Any]) -> str:
        at = {s["latency_ms"]: s for s in f["path_against_direct_call"]}
        return f"{at[250]['ratio']:.2f}x at 250 ms ({at[0]['ratio']:.1f}x at 0 ms)"

    def burst(f: dict[str, Any]) -> str:
        return f"{f['burst']['seconds']:.1f} s, {f['burst']['ratio']:.2f}x"

    def scaling(f: dict[str, Any]) -> str:
        rates = [
            f"{p['latency_ms']} ms: "
            + " / ".join(
                f"{q['actions_per_second']:g}"
                for q in f["throughput"]
                if q["latency_ms"] == p["latency_ms"]
            )
            for p in f["throughput"]
            if p["workers"] == 1
        ]
        return "; ".join(rates) + " a second"

    def pages(f: dict[str, Any]) -> str:
        worst = max(f["pages"], key=lambda page: page["p95_ms"])
        return f"slowest p95 {worst['p95_ms']:.1f} ms ({worst['page']})"

    def reply(f: dict[str, Any]) -> str:
        return "; ".join(
            f"{r['drafter']}: p50 {r['p50']:,.0f} ms" for r in f["message_to_reply_kept_ms"]
        )

    def tokens(f: dict[str, Any]) -> str:
        modes = {m["mode"]: m["billed"] for m in f["tokens_per_drafted_case"]["modes"]}
        return ", ".join(f"{mode} {billed:,.0f}" for mode, billed in modes.items())

    def history(f: dict[str, Any]) -> str:
        return "; ".join(
            f"{s['provider']} {100 * s['used_per_second'] / s['allowed_per_second']:.1f}% "
            f"({s['refused']} refused)"
            for s in f["scans"]
        )

    def cases(f: dict[str, Any]) -> str:
        broken = sum(f["invariants"].values())
        return (
            f"{f['cases']} cases: invariants {broken} broken; correct "
            f"{f['resolved_correctly_share']:.1%}; needless escalations "
            f"{f['needless_escalation_share']:.1%}; clicks {f['staff_clicks_per_routine_case']:g} "
            f"(approvals {f['staff_approvals_per_routine_case']:g}); "
            f"typed twice {f['facts_typed_twice']}"
        )

    def load(f: dict[str, Any]) -> str:
        held = all(check["held"] for check in f.get("invariants", []))
        total = sum(s["requests"] for s in f["surfaces"])
        standing = "held" if held else "BROKEN"
        return f"{total:,} requests over {len(f['surfaces'])} surfaces; invariants {standing}"

    row(
        "case_bench",
        "the case bench",
        "invariants 0; correct >= 99%; needless escalations <= 5%; 1 click; 0 typed twice",
        cases,
    )
    row(
        "load",
        "every surface under load, 10 minutes",
        "nothing lost, nothing twice, no duplicate action",
        load,
    )
    row(
        "load_faults",
        "the same with faults",
        "every action provider-reported or unclear with its look-up set",
        load,
    )
    row(
        "money_path",
        "the whole path over a direct provider call",
        "at most 2.08x at 250 ms (floor 2.0x)",
        path,
    )
    row(
        "scaling",
        "executed actions a second, 1 / 2 / 4 workers",
        "growing with the workers",
        scaling,
    )
    row(
        "money_path", "500 approvals at Stripe's rate limit", "at most 1.2x the limit's pace", burst
    )
    row(
        "webhooks",
        "webhook acknowledgement at 200 a second",
        "p99 at most 50 ms",
        lambda f: f"p99 {f['acknowledged_ms']['p99']:.1f} ms",
    )
    row("drafting", "message to reply kept", "none set", reply)
    row("shopify", "the admin queue and search at 10,000 cases", "p95 at most 100 ms", pages)
    row("drafting", "billed input tokens per drafted case", "caching saves", tokens)
    row(
        "history",
        "the history scan against the providers' limits",
        "under the limit, nothing refused",
        history,
    )
    row(
        "whatif",
        "the policy what-if over 10,000 past actions",
        "under 10 s",
        lambda f: f"median {f['median_seconds']:.2f} s",
    )
    print("| figure | goal | latest | run (UTC) |")
    print("|---|---|---|---|")
    for what, goal, latest, when in rows:
        print(f"| {what} | {goal} | {latest} | {when.replace('T', ' ')} |")


def main() -> None:
    for key, draw in DRAWN.items():
        name = key.split("/")[0]
        run = kept(name)
        if run is None:
            print(f"no figures kept for {name}: run its benchmark first")
            continue
        draw(run)
    throughput(kept("money_path"), kept("scaling"))
    summary()


if __name__ == "__main__":
    main()
