"""The experiments' own sections of ``show`` and the HTML report: server statistics, availability
events and operation benchmarks. Kept apart from the main tables (report/text.py, report/html.py),
which call ``text_tables`` / ``html_context`` and know nothing of these figures."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from benchwright.results import ResultDocument, ServerStats
from benchwright.runs import RunRecord

# The counters worth a glance, per source; the whole snapshot is in the result (show --json).
HEADLINE: dict[str, tuple[str, ...]] = {
    "pg_stat_database": (
        "xact_commit", "xact_rollback", "blks_hit", "blks_read", "tup_returned", "tup_fetched",
        "tup_inserted", "tup_updated", "tup_deleted", "deadlocks", "temp_bytes",
    ),
    "pg_stat_bgwriter": (
        "checkpoints_timed", "checkpoints_req", "buffers_checkpoint", "buffers_clean", "buffers_backend",
    ),
    "pg_stat_checkpointer": ("num_timed", "num_requested", "buffers_written"),
    "global_status": (
        "Questions", "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit", "Com_rollback",
        "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", "Innodb_data_writes",
        "Innodb_row_lock_waits", "Created_tmp_disk_tables", "Aborted_connects", "Max_used_connections",
    ),
    "stats": (
        "total_commands_processed", "keyspace_hits", "keyspace_misses", "expired_keys", "evicted_keys",
        "rejected_connections", "total_connections_received",
    ),
    "memory": ("used_memory",),
}  # fmt: skip
GAUGES = {"Max_used_connections", "used_memory", "numbackends"}


def headline(stats: ServerStats) -> list[tuple[str, str, float]]:
    """(source, counter, value): deltas of counters, the after value of gauges, busiest commands."""
    rows: list[tuple[str, str, float]] = []
    for source, group in stats.groups.items():
        if source == "commandstats":
            calls = sorted(
                ((k.removesuffix(".calls"), v) for k, v in group.delta.items() if k.endswith(".calls")),
                key=lambda kv: -kv[1],
            )
            rows += [(source, f"{name} calls", v) for name, v in calls[:6] if v > 0]
            continue
        for name in HEADLINE.get(source, ()):
            values = group.after if name in GAUGES else group.delta
            if name in values:
                rows.append((source, name, values[name]))
    return rows


def _measured(record: RunRecord) -> list[tuple[str, int, ResultDocument]]:
    return [(c.cell_id, c.repeat, c.measured) for c in record.cells if c.measured is not None]


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}{unit}" if abs(value) >= 100 or value == int(value) else f"{value:,.2f}{unit}"


def text_tables(record: RunRecord) -> list[Table]:
    """Rich tables for ``show``: one of server statistics, one of availability events (when any)."""
    tables: list[Table] = []
    stats_rows = [
        (cell, rep, source, name, value)
        for cell, rep, doc in _measured(record)
        if doc.server_stats is not None
        for source, name, value in headline(doc.server_stats)
    ]
    if stats_rows:
        notes = sorted(
            {
                f"{cell}: {n}"
                for cell, _, doc in _measured(record)
                if doc.server_stats
                for n in doc.server_stats.notes
            }
        )
        t = Table(
            title="Server statistics during the measured phase (delta; gauges: after)",
            caption="\n".join(notes) or None,
        )
        for col in ("cell", "rep", "source", "counter"):
            t.add_column(col)
        t.add_column("value", justify="right")
        for cell, rep, source, name, value in stats_rows:
            t.add_row(cell, str(rep), source, name, _fmt(value))
        tables.append(t)
    events = [
        (cell, rep, e)
        for cell, rep, doc in _measured(record)
        if doc.availability
        for e in doc.availability.events
    ]
    if events:
        t = Table(title="Availability events")
        for col in ("cell", "rep", "action", "issued s", "unavailable s", "errors", "steady after s",
                    "ops/s before", "ops/s after", "p99 us before", "p99 us after"):  # fmt: skip
            t.add_column(col, justify="left" if col in ("cell", "action") else "right")
        for cell, rep, e in events:
            t.add_row(
                cell, str(rep), e.action, _fmt(e.issued_s), _fmt(e.unavailable_s), str(e.errors),
                _fmt(e.steady_after_s), _fmt(e.before.throughput if e.before else None),
                _fmt(e.after.throughput if e.after else None), _fmt(e.before.p99_us if e.before else None),
                _fmt(e.after.p99_us if e.after else None),
            )  # fmt: skip
        tables.append(t)
    timed = [(cell, rep, o) for cell, rep, doc in _measured(record) for o in doc.timed_operations]
    if timed:
        t = Table(title="Operation benchmarks (after the measured phase)")
        for col in ("cell", "rep", "operation", "seconds", "steps", "size MB", "detail"):
            t.add_column(col, justify="right" if col in ("seconds", "size MB") else "left")
        for cell, rep, o in timed:
            t.add_row(cell, str(rep), o.name, _fmt(o.seconds), _steps(o.steps), _mb(o.size_bytes), o.detail)
        tables.append(t)
    return tables


def _steps(steps: dict[str, float]) -> str:
    return ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in steps.items())


def _mb(size: int | None) -> str:
    return "-" if size is None else f"{size / 1e6:,.1f}"


def html_context(record: RunRecord) -> dict[str, Any]:
    """The figures of the report's experiment sections (templates/experiments.html.j2): availability
    events, operation benchmarks and server statistics, each empty when the run has none."""
    events = [
        [cell, str(rep), e.action, _fmt(e.issued_s), _fmt(e.unavailable_s), str(e.errors),
         str(e.clients_affected), _fmt(e.steady_after_s),
         _fmt(e.before.throughput if e.before else None), _fmt(e.after.throughput if e.after else None),
         _fmt(e.before.p99_us if e.before else None), _fmt(e.after.p99_us if e.after else None)]
        for cell, rep, doc in _measured(record)
        if doc.availability
        for e in doc.availability.events
    ]  # fmt: skip
    timed = [
        [cell, str(rep), o.name, _fmt(o.seconds), _steps(o.steps), _mb(o.size_bytes), o.detail]
        for cell, rep, doc in _measured(record)
        for o in doc.timed_operations
    ]
    stats = [
        {
            "title": f"{cell} #{rep + 1}: {doc.server_stats.source}",
            "rows": [[source, name, _fmt(v)] for source, name, v in headline(doc.server_stats)],
            "statements": [[s.query, f"{s.calls:,}", f"{s.total_ms:,.1f}"] for s in doc.server_stats.top_statements],
            "notes": list(doc.server_stats.notes),
        }
        for cell, rep, doc in _measured(record)
        if doc.server_stats is not None
    ]  # fmt: skip
    return {"events": events, "timed": timed, "stats": stats}
