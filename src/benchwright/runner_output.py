"""What one runner writes to its result location, and the phase it was measuring when it stopped.

Moved out of benchwright.results (which re-exports both names) when the completion marker and the
flushed intervals of the phase in progress came in (issue 30: honest outcomes under faults).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from benchwright.results import IntervalSample, Measurement, Model, ResultDocument


class PartialPhase(Model):
    """The phase a runner is measuring: the intervals it has flushed so far (every few seconds), so
    a runner killed mid-phase (SIGKILL, its host gone) leaves what it measured. Counts only: the
    phase's latency histograms exist only once it ends, and nothing here pretends otherwise."""

    phase: str
    workload: str
    engine: str
    started_at: datetime
    latency: Literal["response_time", "service_time"] = "service_time"
    interval_s: float = 1.0
    intervals: list[IntervalSample] = Field(default_factory=list)

    def document(self) -> ResultDocument:
        """The phase as far as it got: aborted and invalid, its operations counted from the flushed
        intervals, with no per-operation latency (no histogram survived)."""
        total = sum(sum(i.operations.values()) for i in self.intervals)
        errors = sum(i.errors for i in self.intervals)
        runtime_s = max((i.t for i in self.intervals), default=0.0)
        doc = ResultDocument(
            workload=self.workload,
            phase=self.phase,
            engine=self.engine,
            measurement=Measurement(
                latency=self.latency,
                method="the intervals a runner flushed before it stopped without finishing the phase: "
                "counts per interval, no latency histogram",
                interval_s=self.interval_s,
            ),
            started_at=self.started_at,
            ended_at=self.started_at + timedelta(seconds=runtime_s),
            runtime_ms=round(runtime_s * 1000, 3),
            operations_total=total,
            throughput=total / runtime_s if runtime_s else 0.0,
            failed_total=errors,
            operations={},
            intervals=list(self.intervals),
            aborted=True,
        )
        doc.flag(
            "runner_lost",
            "invalid",
            f"the runner stopped during the {self.phase} phase without finishing it (killed, or its host "
            f"went away): only the {len(self.intervals)} interval(s) it had flushed are kept, "
            f"{total:,} operations in {runtime_s:g} s, with no latency histogram",
        )
        return doc


class RunnerOutput(Model):
    """What one runner writes to its result location (a file, or one S3 object): the documents of
    the phases done so far, rewritten after every phase, and the error that stopped it, if any.

    The runner writes it, and both launchers (local subprocess, ECS/EC2) read it through this one
    model, so the two sides cannot disagree about its shape."""

    run_id: str
    cell_id: str
    runner_index: int = 0
    documents: list[ResultDocument] = Field(default_factory=list)
    error: str | None = None
    # phase -> when the runner started it (UTC), written as each phase starts: the cloud workflow
    # times a spec's events from the measured phase's start without reading the runner's log
    started: dict[str, datetime] = Field(default_factory=dict)
    # the completion marker: the runner's exit code, in its last write only. None: the runner has
    # not finished, or never will (killed, its host stopped): never read as a success
    exit_code: int | None = None
    partial: PartialPhase | None = None  # the phase in progress, as far as the runner flushed it

    def kept_documents(self) -> list[ResultDocument]:
        """The finished phases' documents, and the phase in progress as far as it was flushed (a
        runner that did not finish it): what the launchers hand on, so nothing measured is lost."""
        done = {d.phase for d in self.documents}
        # a runner that ended on its own (a completion marker, whatever its code) said what its
        # phase came to: the flushed intervals stand in only for one that was killed
        partial = self.partial
        if self.exit_code is not None or partial is None or partial.phase in done or not partial.intervals:
            return list(self.documents)
        return [*self.documents, partial.document()]

    @property
    def completed(self) -> bool:
        return self.exit_code == 0

    @classmethod
    def parse(cls, data: str | bytes | dict[str, Any]) -> RunnerOutput:
        raw = json.loads(data) if isinstance(data, (str, bytes)) else dict(data)
        docs = raw.get("documents")
        if isinstance(docs, list):  # each document goes through its own version check
            raw["documents"] = [ResultDocument.parse(d) if isinstance(d, dict) else d for d in docs]
        return cls.model_validate(raw)
