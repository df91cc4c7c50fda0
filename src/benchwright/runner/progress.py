"""What the runner tells its orchestrator while it runs: one JSON object per line on stdout.

The runner's stdout goes to a log the orchestrator tails (locally) or to CloudWatch Logs (ECS). Each
event is one ``RunnerEvent`` line, validated by this model on both sides, so the orchestrator never
parses prose back with regular expressions. Anything else in the log (a traceback, a tool's own
output) is not an event and is shown as it is. ``human()`` is the terminal line for an event.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SCHEMA: Final = "benchwright.runner.progress/1"


class RunnerEvent(BaseModel):
    """One event of one runner: a phase started, made progress, finished or failed."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Literal["benchwright.runner.progress/1"] = Field(default=SCHEMA, alias="schema")
    event: Literal["phase_started", "progress", "phase_done", "phase_failed"]
    phase: str
    threads: int | None = None
    elapsed_s: float | None = None
    operations: int | None = None
    ops_per_s: float | None = None
    aborted: bool = False
    message: str | None = None

    def line(self) -> str:
        """The event as one JSON line (``schema`` first, so a reader can tell it at a glance)."""
        return self.model_dump_json(by_alias=True, exclude_none=True)

    @classmethod
    def parse_line(cls, line: str) -> RunnerEvent | None:
        """The event on this log line, or None when the line is not one (shown as it is)."""
        text = line.strip()
        if not text.startswith("{") or SCHEMA not in text:
            return None
        try:
            return cls.model_validate_json(text)
        except ValidationError:
            return None

    def human(self) -> str:
        """The line a person reads (the orchestrator's console without progress bars)."""
        if self.event == "phase_started":
            return f"runner: phase {self.phase} started ({self.threads} threads)"
        if self.event == "progress":
            return (
                f"runner: phase {self.phase} {self.elapsed_s or 0:.0f} s, {self.operations or 0:,} ops, "
                f"{self.ops_per_s or 0:,.0f} ops/s"
            )
        if self.event == "phase_done":
            return (
                f"runner: phase {self.phase} done: {self.operations or 0} ops, {self.ops_per_s or 0:,.0f} ops/s"
                + (" (aborted)" if self.aborted else "")
            )
        return f"runner: phase {self.phase} failed: {self.message}"
