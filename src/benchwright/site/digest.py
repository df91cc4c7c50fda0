"""The morning digest: one Slack message per suite per night, from the same verdicts as the site.

It lists the level changes found that night, the invalid cells and what the night cost, links to the
site, and gives each benchmark one short line (its most urgent cell's ops/s and p99, and the
verdict), not every cell id spelled out. Pure data, posted by the Slack notifier
(providers/local/notify.py, ``SlackNotifier.post``) within the same Block Kit limits as a run's
message (report/slack.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchwright.report.slack import SECTION_LIMIT, _cut, link_block
from benchwright.report.units import fmt_latency, fmt_rate
from benchwright.site.nights import Benchmark
from benchwright.site.pages import CellView, summary

NO_SUITE = "(no suite)"
MAX_LINES = 25  # per section; the rest is counted
SHORT = {"alarm": "changed tonight", "still": "still at a new level", "steady": "steady", "provisional": "provisional",
         "none": "no verdict"}  # fmt: skip


@dataclass(frozen=True)
class Judged:
    bench: Benchmark
    views: list[CellView]


def _lines(title: str, lines: Sequence[str], empty: str) -> str:
    """A section's text: as many whole lines as fit Slack's limit, then how many were left out."""
    text = f"*{title}*"
    for i, line in enumerate(lines or [empty]):
        if i == MAX_LINES or len(text) + len(line) + 40 > SECTION_LIMIT:
            return f"{text}\n…and {len(lines) - i} more"
        text += "\n" + _cut(line, 300)
    return text


def _bench_line(item: Judged) -> str:
    verdict = summary(item.views)
    top = item.views[0].last if item.views else None
    figures = (f"{fmt_rate(top.throughput)} ops/s, p99 {fmt_latency(top.p99_ms * 1000 if top.p99_ms else None)}"
               if top else "no figures")  # fmt: skip
    status = item.bench.last.status if item.bench.last else "-"
    mark = " :no_entry: invalid" if status == "invalid" else ""
    return f"`{item.bench.name}` {figures}: {SHORT.get(verdict.kind, verdict.kind)}{mark}"


def by_suite(judged: Sequence[Judged]) -> dict[str, list[Judged]]:
    """The benchmarks of each suite whose newest run is on the suite's newest night (UTC date)."""
    suites: dict[str, list[Judged]] = {}
    for item in judged:
        if item.bench.last is not None:
            suites.setdefault(item.bench.last.suite or NO_SUITE, []).append(item)
    out = {}
    for suite, items in suites.items():
        night = max(i.bench.last.at.date() for i in items if i.bench.last)
        out[suite] = [i for i in items if i.bench.last and i.bench.last.at.date() == night]
    return out


def digest(suite: str, items: Sequence[Judged], site_link: str | None) -> dict[str, Any]:
    """``{"text", "blocks"}`` for ``SlackNotifier.post``: the suite's night in one message."""
    night = max(i.bench.last.at for i in items if i.bench.last).date()
    changes = [f"`{i.bench.name}` {v.cell_id}: {v.verdict.message}" for i in items for v in i.views
               if v.verdict.kind == "alarm"]  # fmt: skip
    invalid = [f"`{i.bench.name}` {v.cell_id}" for i in items for v in i.views if not v.last.valid]
    costs = [i.bench.last.cost for i in items if i.bench.last and i.bench.last.cost is not None]
    cost = f"${sum(costs):,.2f}" if costs else "unknown"
    head = (f"{len(items)} benchmark(s), {len(changes)} level change(s) found, {len(invalid)} invalid cell(s), "
            f"cost {cost}")  # fmt: skip
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(f"{suite}: night of {night}", 150)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": _cut(head)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": _lines("Changes tonight", changes, "none")}},
        {"type": "section", "text": {"type": "mrkdwn", "text": _lines("Invalid cells", invalid, "none")}},
        {"type": "section", "text": {"type": "mrkdwn",
                                     "text": _lines("Benchmarks", [_bench_line(i) for i in items], "none")}},
    ]  # fmt: skip
    if site_link:
        blocks.append(link_block("Site", "open the nightly site", site_link))
    return {"text": _cut(f"{suite} night of {night}: {head}", 3000), "blocks": blocks}


def digests(judged: Sequence[Judged], site_link: str | None) -> list[dict[str, Any]]:
    """One message per suite, for its newest night, suites in name order."""
    return [digest(suite, items, site_link) for suite, items in sorted(by_suite(judged).items())]
