"""One Slack Block Kit message per run: name, verdict against history, headline numbers, validity,
cost and where the report is. Pure data (no network) so it is easy to test and reuse from AWS.

Block Kit limits respected: a header of at most 150 characters, section text under 3,000, at most
10 fields per section and 50 blocks per message; long lists are cut with "and N more".
"""

from __future__ import annotations

from typing import Any

from benchwright.judge.validity import phase_flags
from benchwright.outcome import invalid_cells, invalid_headline, shown_error, shown_status
from benchwright.report.cell_names import short_ids
from benchwright.report.measured_on import floor_short
from benchwright.report.units import fmt_latency, fmt_rate, fmt_ratio, fmt_share
from benchwright.results import redact_text
from benchwright.runs import RunRecord

STATUS_EMOJI = {
    "succeeded": ":white_check_mark:",
    "invalid": ":no_entry:",
    "failed": ":x:",
    "aborted": ":warning:",
    "running": ":hourglass:",
}
# the attachment bar's colour: only a success is green (an invalid run finished, its numbers do not stand)
STATUS_COLOUR = {"succeeded": "#2eb67d", "invalid": "#e8912d", "failed": "#e01e5a", "aborted": "#e01e5a",
                 "running": "#1d9bd1"}  # fmt: skip
VERDICT_EMOJI = {"faster": ":rocket:", "slower": ":small_red_triangle_down:", "no_change": ":heavy_equals_sign:",
                 "unstable": ":grey_question:", "no_history": ":new:",
                 "no_verdict": ":heavy_minus_sign:"}  # fmt: skip
MAX_CELLS = 12
MAX_FLAGS = 6
SECTION_LIMIT = 2900


def _cut(text: str, limit: int = SECTION_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def link_block(label: str, title: str, location: str) -> dict[str, Any]:
    """A context line linking ``location``: a link when it is a URL, else the path as code."""
    link = f"<{location}|{title}>" if location.startswith(("http://", "https://")) else f"`{location}`"
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(f"{label}: {link}", 1900)}]}


def _verdict_line(record: RunRecord) -> str:
    v = record.verdict
    if v is None:
        return "not compared"
    line = f"{VERDICT_EMOJI[v.kind]} *{v.kind.replace('_', ' ')}*"
    if v.effect is not None and v.ci_low is not None and v.ci_high is not None:
        line += (f" {v.metric} {fmt_ratio(v.effect)} (95% CI {fmt_ratio(v.ci_low)} to {fmt_ratio(v.ci_high)},"
                 f" min effect {v.min_effect:.0%})")  # fmt: skip
    if v.fingerprint_changes:  # not compared across a change of machine, version, storage or spec
        line += "\nfingerprint changed: " + "; ".join(v.fingerprint_changes[:4])
    return line


def headline_rows(record: RunRecord) -> list[str]:
    """One line per cell (repeat 0 unless it is missing): successful ops/s, the worst p99 and the share
    of operations that failed, and, when the verdict
    compared throughput, the number before and the change next to it. Cells are named by their
    short ids (report.cell_names); the linked report spells out the full ones."""
    rows = []
    names = short_ids(c.cell_id for c in record.cells)
    before = (
        {c.cell_id: c for c in record.verdict.cells}
        if record.verdict and record.verdict.metric == "throughput"
        else {}
    )
    for cell in record.cells:
        doc = cell.measured
        if doc is None or (
            cell.repeat and any(c.cell_id == cell.cell_id and c.repeat == 0 for c in record.cells)
        ):
            continue
        p99 = max((s.p99_us for s in doc.succeeded().values()), default=None)
        bad = any(f.severity == "invalid" for f in [*cell.validity, *doc.validity])
        mark = " :warning: invalid" if bad else ""
        was = before.get(cell.cell_id)
        change = ""
        if was is not None and was.baseline and was.value:
            change = f" (before {fmt_rate(was.baseline)}, {fmt_ratio(was.value / was.baseline)})"
        errors = f", {fmt_share(doc.failed(), doc.attempted)}% failed" if doc.failed() else ""
        floor = f", {floor_short(doc.network_floor)}" if doc.network_floor is not None else ""
        rows.append(
            f"`{names[cell.cell_id]}`  {fmt_rate(doc.throughput)} ops/s{change}, p99 {fmt_latency(p99)}{floor}"
            f"{errors}{mark}"
        )
    return rows


def build_message(
    record: RunRecord, report_location: str | None = None, site_url: str | None = None
) -> dict[str, Any]:
    """``{"text": fallback, "blocks": [...]}`` ready for ``WebhookClient.send(**message)``; with
    ``site_url``, a link to the nightly site (FinishRun's bucket site on AWS)."""
    status, error = shown_status(record), shown_error(record)
    headline = invalid_headline(record) if status == "invalid" else None
    emoji = STATUS_EMOJI.get(status, "")
    title = _cut(f"{record.spec_name}: {headline or status}", 150)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": True}},
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*Run*\n`{record.run_id}`"},
                {"type": "mrkdwn", "text": f"*Status*\n{emoji} {headline or status}"},
                {"type": "mrkdwn", "text": f"*Verdict vs history*\n{_verdict_line(record)}"},
                {"type": "mrkdwn", "text": f"*Cost*\n{_cost(record)}"},
            ],
        },
    ]
    if status == "invalid":
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(_invalid_text(record))}})
    elif error:
        blocks.append(
            {"type": "section", "text": {"type": "mrkdwn", "text": _cut(f"*Error:* {redact_text(error)}")}}
        )
    rows = headline_rows(record)
    if rows:
        shown = rows[:MAX_CELLS]
        more = f"\n…and {len(rows) - MAX_CELLS} more cells" if len(rows) > MAX_CELLS else ""
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": _cut("*Results*\n" + "\n".join(shown) + more)},
            }
        )
    flags = grouped_flags(record)
    validity = "all results passed the validity policy" if not flags else "\n".join(flags[:MAX_FLAGS])
    if len(flags) > MAX_FLAGS:
        validity += f"\n…and {len(flags) - MAX_FLAGS} more"
    blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(f"*Validity*\n{validity}")}})
    location = report_location or record.report
    if location:
        blocks.append(link_block("Report", "open the report", location))
    if site_url:
        blocks.append(link_block("Site", "open the nightly site", site_url))
    verdict = record.verdict.kind.replace("_", " ") if record.verdict else "not compared"
    text = f"{record.spec_name} {record.run_id}: {headline or status}, verdict {verdict}"
    # the status as a coloured bar (an attachment: Block Kit itself has no colour)
    bar = {"color": STATUS_COLOUR.get(status, "#e01e5a"), "fallback": text,
           "blocks": [{"type": "context", "elements": [{"type": "mrkdwn", "text": f"{emoji} {headline or status}"}]}]}  # fmt: skip
    return {"text": text, "blocks": blocks[:50], "attachments": [bar]}


def _invalid_text(record: RunRecord) -> str:
    """Why the run is invalid: each invalid cell with its reasons (the first MAX_FLAGS cells)."""
    cells = invalid_cells(record)
    lines = [f"*{invalid_headline(record)}*: the numbers below are shown, but they do not stand"]
    lines += [f"`{c.label}`: {redact_text('; '.join(c.reasons))}" for c in cells[:MAX_FLAGS]]
    if len(cells) > MAX_FLAGS:
        lines.append(f"…and {len(cells) - MAX_FLAGS} more invalid cells")
    return "\n".join(lines)


def grouped_flags(record: RunRecord) -> list[str]:
    """One line per flag code and phase (a load's error_rate and a run's are two lines): the cells
    that raised it, and the first cell's message standing for the others."""
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for cell in record.cells:
        seen: set[tuple[str, str]] = set()
        for phase, f in phase_flags(cell):
            if f.severity == "info" or (phase, f.code) in seen:
                continue
            seen.add((phase, f.code))
            groups.setdefault((f.severity, f.code, phase), []).append((cell.cell_id, f.message))
    lines = []
    for (severity, code, phase), hits in sorted(groups.items(), key=lambda kv: kv[0][0] != "invalid"):
        cells = sorted({c for c, _ in hits})
        where = f"{len(cells)} cells" if len(cells) > 3 else ", ".join(f"`{c}`" for c in cells)
        level = "*invalid*" if severity == "invalid" else severity
        lines.append(f"{level} {phase} {code} ({where}): {hits[0][1]}")
    return lines


def _cost(record: RunRecord) -> str:
    c = record.cost
    if c is None:
        return "unknown"
    out = f"{c.total:,.2f} {c.currency}"
    if c.ops_per_dollar:
        out += f" ({c.ops_per_dollar:,.0f} ops/$)"
    if c.monthly_nightly:
        out += f"\nnightly for a month: {c.monthly_nightly:,.2f}"
    return out
