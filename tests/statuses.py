"""Shared checks of how failed operations are recorded (schema 2): an operation's failures are their
own entry, ``<OP>-FAILED``, whose statuses are ERROR and RETRY (an attempt re-run after a deadlock);
the ``<OP>`` entry holds the rest (OK, NOT_FOUND, USER_ABORT) and only those count as throughput. Works on a Recorder's ``ops``
(OpSeries) and a ResultDocument's ``operations`` (OperationSummary) alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import pytest

from benchwright.results import ResultDocument, failed_name, is_failed

UNSUCCESSFUL = {"ERROR", "RETRY"}  # the statuses of a -FAILED entry: never throughput


class _HasStatuses(Protocol):
    statuses: dict[str, int]


def failures_of(ops: Mapping[str, _HasStatuses], name: str) -> int:
    """How many ``name`` operations failed: the ERROR count of its -FAILED entry, which holds only
    ERROR and RETRY, while ``name``'s own entry (if any) holds neither."""
    own = ops.get(name)
    assert own is None or not UNSUCCESSFUL & set(own.statuses), (name, own.statuses)
    failed = ops.get(failed_name(name))
    if failed is None:
        return 0
    assert set(failed.statuses) <= UNSUCCESSFUL and sum(failed.statuses.values()) > 0, (name, failed.statuses)
    return failed.statuses.get("ERROR", 0)


def statuses_of(ops: Mapping[str, _HasStatuses], name: str) -> dict[str, int]:
    """``name``'s statuses with its failures merged back in (``{"OK": 5, "ERROR": 3}``), for a test
    that wants the combined view; checks on the way that the two entries are split as they should."""
    merged = dict(ops[name].statuses) if name in ops else {}
    failures_of(ops, name)  # the split checked
    for status, n in getattr(ops.get(failed_name(name)), "statuses", {}).items():
        merged[status] = n
    return merged


def assert_honest(doc: ResultDocument) -> None:
    """The document-wide figures count successes only: operations_total and throughput are the
    non-failed entries, failed_total the -FAILED ones, every -FAILED entry is all ERROR and every
    other entry has none, and (Benchwright's own measurement) the intervals add up to the same split."""
    succeeded = {name: o for name, o in doc.operations.items() if not is_failed(name)}
    failed = {name: o for name, o in doc.operations.items() if is_failed(name)}
    for name, entry in succeeded.items():
        assert not UNSUCCESSFUL & set(entry.statuses), (name, entry.statuses)
        assert sum(entry.statuses.values()) == entry.operations, (name, entry.statuses, entry.operations)
    for name, entry in failed.items():
        assert set(entry.statuses) <= UNSUCCESSFUL, (name, entry.statuses)
        assert sum(entry.statuses.values()) == entry.operations > 0, (name, entry.statuses)
    assert doc.operations_total == sum(o.operations for o in succeeded.values())
    assert doc.failed_total == sum(o.statuses.get("ERROR", 0) for o in failed.values()) == doc.failed()
    assert doc.attempted == doc.operations_total + doc.failed_total + doc.retried()
    runtime_s = doc.runtime_ms / 1000
    # runtime_ms is kept to the microsecond: allow for that rounding on a very short phase
    assert doc.throughput == pytest.approx(
        doc.operations_total / runtime_s, rel=max(1e-6, 1e-3 / doc.runtime_ms)
    )
    if doc.measurement.source == "benchwright" and doc.intervals:
        # Benchwright's own intervals cover the whole phase: their successes and failures add up
        assert sum(sum(s.operations.values()) for s in doc.intervals) == doc.operations_total
        assert sum(s.errors for s in doc.intervals) == doc.failed_total
        width = doc.measurement.interval_s
        for s in doc.intervals:  # an interval's throughput is its successes, whatever failed in it
            assert s.throughput == pytest.approx(sum(s.operations.values()) / width), s
