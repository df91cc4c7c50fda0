"""One phase's dataset duties (runner/dataset.py), the same for the engine and the native tools:
before the phase, reset the target for a load, adopt it for a run that makes its own data, or check
that a run finds its cell's data; after a load, check the data and mark it complete; on the result
document, the identity (``extra["dataset"]``) and the flags."""

from __future__ import annotations

from collections.abc import Callable

from benchwright.results import ResultDocument
from benchwright.runner import dataset
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Driver
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.base import Workload


class DatasetGuard:
    """Built once per phase; ``identity`` is None when there is nothing to guard (an engine without
    data, a workload without a dataset, or the checks switched off for a fan-out)."""

    def __init__(self, workload: Workload, config: PhaseConfig) -> None:
        self.workload = workload
        self.phase = config.workload_phase
        self.off = config.properties.get(dataset.CHECK_PROPERTY) == "off"
        self.properties = config.properties
        self.mine = workload.dataset(config.engine, self.phase) if config.engine in dataset.ENGINES else None
        self.identity: DatasetIdentity | None = None if self.off else self.mine
        self.found: list[str] = []
        self.notes: list[str] = []

    def before(self, driver: Driver, setup: Callable[[], None]) -> None:
        """Around the workload's ``setup`` (a no-op for a native tool, which makes its own schema)."""
        identity = self.identity
        if identity is None:
            setup()
            return
        if self.phase == "load":
            dataset.reset_for_load(driver, identity, self.properties)
        if self.phase == "run" and self.workload.dataset_in_run:
            dataset.adopt(driver, identity, self.properties, setup)
            return
        setup()
        if self.phase == "run":
            self.found, note = dataset.check_reuse(driver, identity, self._sample)
            self.notes += [note] if note else []

    def note(self, doc: ResultDocument) -> None:
        """The identity in ``extra["dataset"]``; a run or warm-up on other data is invalid."""
        if self.mine is not None:
            doc.extra["dataset"] = self.mine.as_dict()
        if self.off and self.mine is not None:
            doc.flag(
                dataset.UNCHECKED,
                "info",
                "dataset reset and checks were off (several runners share one load)",
            )
        for note in self.notes:
            doc.flag(dataset.UNMARKED, "warning", note)
        if self.found:
            message = "the data on the target is not this cell's: " + "; ".join(self.found)
            doc.flag(dataset.MISMATCH, "invalid", message)

    def after_load(self, driver: Driver, doc: ResultDocument) -> None:
        """Check the loaded data; only data that passes is marked complete for later cells."""
        if self.identity is None or self.phase != "load":
            return
        problems = dataset.check_load(driver, self.identity, self._sample)
        if problems:
            message = "the loaded data is not what the load should write: " + "; ".join(problems)
            doc.flag(dataset.LOAD_MISMATCH, "invalid", message)
        else:
            dataset.write_marker(driver, self.identity, complete=True)

    def _sample(self, driver: Driver) -> list[str]:
        assert self.identity is not None
        return self.workload.sample_problems(driver, self.identity)
