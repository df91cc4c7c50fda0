"""What a workload is, and how one registers (``register``; the lookups are in registry.py).

A workload chooses operations and their arguments; it never times anything and never imports a
driver. For each thread it yields ``(operation name, callable)`` pairs: the engine times the
callable (which makes the driver call and returns a ``Status``). The work done *before* the yield
(choosing keys, building values) is outside the timed region, as in YCSB and go-ycsb.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, ClassVar

from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver
from benchwright.runner.event_loop import Request
from benchwright.runner.measure import Status
from benchwright.runner.workloads.descriptor import WorkloadDescriptor

Operation = tuple[str, Callable[[], Status]]

# Requests drawn at a time for the event loop, one comprehension each: a generator step per request
# costs more inside a run than out of it. Small, so that making a block delays other connections
# little. Only for requests whose draws depend on no reply (drawing ahead changes when, not what).
BLOCK = 64
# Blocks a client alone in its worker process makes one after the other (``requests_of``). Inside a
# run the kernel's work for 64 round trips leaves the interpreter's code and objects out of the
# caches, and a block made cold cost YCSB A on PostgreSQL 3.4-3.7 us of CPU a request against 1.8-2.1
# made four in a row (timed in the workers, 4 clients on 2 cores). With no other connection in the
# process nothing waits while they are made; with others, each block stays a short pause of its own.
GROUP = 4


@dataclass(frozen=True)
class ThreadInfo:
    index: int  # global thread index across all worker processes
    count: int  # global number of threads
    seed: int  # per-thread random seed, derived from the run's seed
    alone: bool = (
        False  # the only client of its worker process, unpaced (client_model.alone_in_process; GROUP)
    )


def requests_of(blocks: Iterator[list[Any]], thread: ThreadInfo) -> Iterator[Any]:
    """The requests of ``blocks`` in their order; ``GROUP`` blocks made at once when the client is
    alone in its process. The blocks are the same either way: only when they are made changes."""
    if not thread.alone:
        return chain.from_iterable(blocks)
    return chain.from_iterable(_grouped(blocks))


def _grouped(blocks: Iterator[list[Any]]) -> Iterator[list[Any]]:
    while True:
        group: list[Any] = []
        for block in islice(blocks, GROUP):
            group += block
        if not group:
            return
        yield group


class Workload(ABC):
    """Subclasses set ``name`` and ``requires`` and are registered with ``@register``."""

    name: ClassVar[str]
    requires: ClassVar[Capability]
    phases: ClassVar[tuple[str, ...]] = ("load", "run")
    # phases run only when the spec writes them (redis-bench: a SET pass as the load, GET as the run)
    optional_phases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    # what the rest of the system asks about the workload, from its folder's descriptor.py
    descriptor: ClassVar[WorkloadDescriptor]
    # the run phase's set-up makes the data (a SQL script's init, redis-bench's keys): the run adopts
    # the target (runner/dataset.py ``adopt``) instead of checking that a load put its data there
    dataset_in_run: ClassVar[bool] = False

    def __init__(self, properties: Mapping[str, str]) -> None:
        self.properties = dict(properties)

    def warm_up(self) -> None:  # noqa: B027 - optional hook
        """Build per-process tables now: each worker calls it before it reports ready, so the cost
        does not land on the first measured operation (or, on an event loop, on every request in
        flight while it is built)."""

    def setup(self, driver: Driver, phase: str) -> None:  # noqa: B027 - optional hook
        """Once per phase, in the parent, before any worker starts: create or check the schema.
        Raise ``SchemaMissing`` naming the table when the run phase finds no loaded data."""

    @abstractmethod
    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        """This thread's operations. Finite for a load; may be endless for a run (the engine stops
        it at the operation count or the time limit)."""

    def wire_requests(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Request] | None:
        """This thread's requests already in the driver's wire format, for the engine's event-loop
        client (runner/event_loop.py); None, the default: the phase runs on threads. Must return
        None without side effects when the driver has no wire format for the workload."""
        return None

    def operation_limit(self, phase: str) -> int | None:
        """Total operations for the phase across all threads, or None for time-bounded phases."""
        return None

    def time_limit(self, phase: str) -> float | None:
        """Seconds the phase may run, or None."""
        return None

    def worker_figures(self) -> dict[str, Any]:
        """What a worker process measured besides the operations (pgbench -r's per-statement sums),
        sent back in its report; picklable. Empty by default."""
        return {}

    def absorb_worker_figures(self, figures: list[dict[str, Any]]) -> None:  # noqa: B027 - optional hook
        """In the parent, before ``finish``: every worker's ``worker_figures``."""

    def finish(self, driver: Driver, phase: str, result: Any) -> None:  # noqa: B027 - optional hook
        """Once per phase, in the parent, after the workers: verify (row counts, consistency
        conditions) and add workload figures to ``result.extra`` / ``result.validity``."""

    def dataset(self, engine: str, phase: str) -> DatasetIdentity | None:
        """The identity of the data this workload's load writes (``phase`` "load") or its run
        expects (``phase`` "run"; a shape value None: whatever was loaded), runner/dataset.py: the
        engine resets the target before the load, checks the data after it and before every run
        phase. None: the workload keeps no data of its own between phases."""
        return None

    def sample_problems(self, driver: Driver, identity: DatasetIdentity) -> list[str]:
        """After a load: what is wrong with one of this dataset's own records, read back (missing,
        other field count or length, other type); empty when it matches."""
        return []


def split(total: int, parts: int, index: int) -> int:
    """Share ``index`` of ``total`` split into ``parts`` nearly equal integers (first ones larger)."""
    return total // parts + (1 if index < total % parts else 0)


WORKLOADS: dict[str, type[Workload]] = {}


def register(cls: type[Workload]) -> type[Workload]:
    """Class decorator: add a workload to the registry; a duplicate name, or a class without its
    descriptor (runner/workloads/descriptor.py), is a programming error."""
    if cls.name in WORKLOADS:
        raise ValueError(f"workload {cls.name!r} is registered twice")
    found = getattr(cls, "descriptor", None)
    if not isinstance(found, WorkloadDescriptor) or found.name != cls.name:
        raise ValueError(
            f"workload {cls.name!r} has no descriptor of its own: set ``descriptor = DESCRIPTOR`` from its "
            "folder's descriptor.py (a WorkloadDescriptor whose name is the workload's)"
        )
    WORKLOADS[cls.name] = cls
    return cls
