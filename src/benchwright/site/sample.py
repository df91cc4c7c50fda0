"""A generated nightly history for tests and the site's speed figures: benchmarks of a few cells,
one run a night, with level shifts, a fingerprint change and invalid nights put where asked.

Each night's document is a copy of one small template (no interval series), so a year of 50
benchmarks is generated in seconds; the numbers a page plots are set per night.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from benchwright.report.sample import make_document
from benchwright.results import Fingerprint, ValidityFlag
from benchwright.runs import CellResult, CostEstimate, RunRecord

FIRST_NIGHT = datetime(2026, 10, 1, 2, 0, tzinfo=UTC)


@dataclass
class Plan:
    """One benchmark's history: ``shifts`` maps a night index to a factor applied from that night on;
    ``context_at`` is the night the engine version changes; ``invalid`` nights carry an invalid flag."""

    name: str
    cells: tuple[str, ...] = ("clients=8", "clients=32")
    level: float = 10_000.0
    noise: float = 0.02
    shifts: dict[int, float] = field(default_factory=dict)
    context_at: int | None = None
    invalid: tuple[int, ...] = ()
    repeats: int = 2
    aa: bool = False  # the spec says ``noise: aa`` (its first two repeats are an A/A pair)


def fingerprint(engine_version: str) -> Fingerprint:
    return Fingerprint(runner_class="local", runner_platform="local", cpu_model="generated",
                       engine_version=engine_version, storage="local disk", spec_digest="gen")  # fmt: skip


def history(plans: list[Plan], nights: int, seed: int = 0, first: datetime = FIRST_NIGHT) -> list[RunRecord]:
    """``nights`` runs of each plan, oldest first."""
    rng = random.Random(seed)
    template = make_document([1000.0, 1000.0], started_at=first)
    old, new = fingerprint("16.3"), fingerprint("16.4")
    records = []
    for p, plan in enumerate(plans):
        for night in range(nights):
            at = first + timedelta(days=night, minutes=p)
            factor = 1.0
            for start, f in plan.shifts.items():
                factor *= f if night >= start else 1.0
            fp = new if plan.context_at is not None and night >= plan.context_at else old
            cells = []
            for c, cell_id in enumerate(plan.cells):
                level = plan.level * (1 + c) * factor
                for r in range(plan.repeats):
                    tput = level * (1 + rng.gauss(0, plan.noise))
                    flags = ([ValidityFlag(code="error_rate", severity="invalid", message="generated: 9% errors")]
                             if night in plan.invalid else [])  # fmt: skip
                    doc = template.model_copy(update={"throughput": tput, "started_at": at, "fingerprint": fp,
                                                      "validity": flags, "run_id": f"{plan.name}-{night}"})  # fmt: skip
                    cost = CostEstimate(total=0.42, ops_per_dollar=tput * 600 / 0.42, source="generated")
                    cells.append(CellResult(cell_id=cell_id, repeat=r, phases={"run": doc}, cost=cost))
            status = "invalid" if night in plan.invalid else "succeeded"
            records.append(RunRecord(run_id=f"{at:%Y%m%d-%H%M%S}-{p:06x}", spec_name=plan.name, status=status,  # type: ignore[arg-type]
                                     started_at=at, ended_at=at + timedelta(minutes=10), cells=cells,
                                     cost=CostEstimate(total=0.42 * len(cells), source="generated"),
                                     tags={"suite": "nightly"},
                                     spec={"noise": "aa"} if plan.aa else {}))  # fmt: skip
    return records
