"""Store schema version 3: the few document fields a year of nights needs, kept as columns.

The nightly site reads each run's suite, cost and noise setting and each cell's cost and measured-phase fingerprint
for every run of a year. Extracting them from the JSON documents took a third of the site's build
(issue 26), so they are written at save time and, for an older store, filled once by the migration.
``context`` is ``Fingerprint.key()``: nights of different keys are never one level.
"""

from __future__ import annotations

import json
import sqlite3

from benchwright.results import Fingerprint
from benchwright.runs import CellResult, RunRecord

SCHEMA_V3 = (
    "ALTER TABLE runs ADD COLUMN suite TEXT",
    "ALTER TABLE runs ADD COLUMN cost_total REAL",
    "ALTER TABLE runs ADD COLUMN suite_run_id TEXT",
    "ALTER TABLE runs ADD COLUMN noise TEXT",  # the spec's noise: (repeats | aa), None when unset
    "ALTER TABLE cells ADD COLUMN cost REAL",
    "ALTER TABLE cells ADD COLUMN ops_per_dollar REAL",
    "ALTER TABLE cells ADD COLUMN fingerprint TEXT",  # the measured ("run") phase's, as JSON
    "ALTER TABLE cells ADD COLUMN context TEXT",  # that fingerprint's key()
)
MEASURED_PHASE = "run"


def run_columns(record: RunRecord) -> tuple[str | None, float | None, str | None, str | None]:
    """(suite tag, total cost, suite run id, the spec's noise) of a run, as the runs table keeps them."""
    noise = record.spec.get("noise")
    return (record.tags.get("suite"), record.cost.total if record.cost else None, record.suite_run_id,
            noise if isinstance(noise, str) else None)  # fmt: skip


def cell_columns(cell: CellResult) -> tuple[float | None, float | None, str | None, str | None]:
    """(cost, ops per dollar, fingerprint JSON, fingerprint key) of one cell and repeat."""
    doc = cell.phases.get(MEASURED_PHASE)
    fingerprint = doc.fingerprint if doc else None
    return (
        cell.cost.total if cell.cost else None,
        cell.cost.ops_per_dollar if cell.cost else None,
        fingerprint.model_dump_json() if fingerprint else None,
        fingerprint.key() if fingerprint else None,
    )


# one pass over the documents with SQLite's JSON functions; the keys are computed once per distinct
# fingerprint (a store holds few), not once per cell
_RUNS_FILL = """
UPDATE runs SET suite = json_extract(document, '$.tags.suite'),
    cost_total = json_extract(document, '$.cost.total'), suite_run_id = json_extract(document, '$.suite_run_id'),
    noise = json_extract(document, '$.spec.noise')
"""
_CELLS_READ = """
SELECT r.run_id, json_extract(e.value, '$.cell_id'), json_extract(e.value, '$.repeat'),
    json_extract(e.value, '$.cost.total'), json_extract(e.value, '$.cost.ops_per_dollar'),
    json_extract(e.value, '$.phases.run.fingerprint')
FROM runs r, json_each(r.document, '$.cells') e
"""


def _keyed(raw: str) -> tuple[str | None, str | None]:
    try:
        fingerprint = Fingerprint.model_validate(json.loads(raw))
    except ValueError:  # a form this Benchwright cannot read: the night's context stays unknown
        return None, None
    return fingerprint.model_dump_json(), fingerprint.key()


def migrate_to_3(conn: sqlite3.Connection) -> None:
    """Add the columns and fill them from the documents already stored."""
    for statement in SCHEMA_V3:
        conn.execute(statement)
    conn.execute(_RUNS_FILL)
    keys: dict[str, tuple[str | None, str | None]] = {}
    rows = []
    for run_id, cell_id, repeat, cost, per_dollar, raw in conn.execute(_CELLS_READ).fetchall():
        if raw is not None and raw not in keys:
            keys[raw] = _keyed(raw)
        text, key = keys[raw] if raw is not None else (None, None)
        rows.append((cost, per_dollar, text, key, run_id, cell_id, repeat or 0))
    conn.executemany(
        "UPDATE cells SET cost = ?, ops_per_dollar = ?, fingerprint = ?, context = ? "
        "WHERE run_id = ? AND cell_id = ? AND repeat = ?",
        rows,
    )
