"""Stalls judged from the interval series (judge/stall.py), on synthetic series whose answer is known.

The review's case: a 10 s server stall inside a 20 s run, levels equal before and after, was judged
valid (no collapse: the level came back). It must be invalid, naming the seconds."""

from __future__ import annotations

import pytest

from benchwright.judge import ValidityPolicy, judge_document
from benchwright.judge.stall import Stall, find_stalls
from benchwright.report.sample import make_document, noisy_series
from benchwright.results import Availability, EventOutcome, IntervalSample
from benchwright.spec.notify import ValidityPolicy as SpecPolicy


def stalled(at: int, seconds: int, total: int = 20, level: float = 2000.0) -> list[float]:
    values = noisy_series(level, total, seed=4)
    return [0.0 if at <= i < at + seconds else v for i, v in enumerate(values)]


def flag(doc: object, code: str) -> object | None:
    return next((f for f in doc.validity if f.code == code), None)  # type: ignore[attr-defined]


def test_a_10_s_stall_in_a_20_s_run_is_invalid_naming_its_seconds() -> None:
    doc = make_document(stalled(at=6, seconds=10))
    doc.intervals = [s for s in doc.intervals if s.throughput > 0]  # as the engine keeps them
    judge_document(doc)
    stall = flag(doc, "stall")
    assert stall is not None and stall.severity == "invalid"  # type: ignore[attr-defined]
    assert "no operation completed from 6 s to 16 s (10 s)" in stall.message  # type: ignore[attr-defined]
    assert "validity.max_stall_s (5 s)" in stall.message  # type: ignore[attr-defined]
    assert not doc.valid
    assert flag(doc, "throughput_collapse") is None  # no zeros, the same level: only the gap shows it


def test_the_engines_sparse_series_is_read_by_its_gaps() -> None:
    """The engine keeps only intervals in which something happened: a stall is a missing stretch."""
    samples = [
        IntervalSample(t=float(t), operations={"READ": 100}, throughput=100.0) for t in (1, 2, 3, 11, 12)
    ]
    assert find_stalls(samples, 1.0, 12.0, 5.0) == [Stall(3.0, 10.0)]
    # failed-only intervals are present but complete nothing
    samples.insert(3, IntervalSample(t=6.0, operations={}, errors=40, throughput=0.0))
    assert find_stalls(samples, 1.0, 12.0, 5.0) == [Stall(3.0, 10.0)]


def test_stalls_at_the_start_and_at_the_end_are_found() -> None:
    samples = [IntervalSample(t=float(t), operations={"GET": 5}, throughput=5.0) for t in range(8, 13)]
    assert find_stalls(samples, 1.0, 20.0, 5.0) == [Stall(0.0, 7.0), Stall(12.0, 20.0)]


def test_a_stall_at_the_threshold_or_below_is_not_flagged() -> None:
    doc = make_document(stalled(at=5, seconds=5))
    judge_document(doc)
    assert flag(doc, "stall") is None
    judge_document(doc := make_document(stalled(at=5, seconds=5)), ValidityPolicy(max_stall_s=4.0))
    assert flag(doc, "stall") is not None


def test_a_throttled_phase_slower_than_the_threshold_is_not_a_stall() -> None:
    """One operation every 4 s by design (target 0.25 ops/s): the schedule, not a stall."""
    doc = make_document([1.0 if i % 4 == 3 else 0.0 for i in range(40)], operations={"READ": 1.0})
    doc.measurement.target_ops_per_sec = 0.25
    judge_document(doc, ValidityPolicy(max_stall_s=2.0))
    assert flag(doc, "stall") is None
    doc.measurement.target_ops_per_sec = None
    judge_document(doc, ValidityPolicy(max_stall_s=2.0))
    assert flag(doc, "stall") is not None


def test_an_outage_during_the_specs_events_is_a_warning() -> None:
    """A failover is the thing measured: its outage is in availability, not a reason to discard."""
    doc = make_document(stalled(at=6, seconds=10))
    doc.availability = Availability(
        method="test",
        events=[
            EventOutcome(
                action="failover", at_s=6, issued_at=doc.started_at, issued_s=6.0, unavailable_s=10.0
            )
        ],
    )
    judge_document(doc)
    stall = flag(doc, "stall")
    assert stall is not None and stall.severity == "warning"  # type: ignore[attr-defined]


def test_the_load_phase_is_not_judged_for_stalls() -> None:
    doc = make_document(stalled(at=6, seconds=10), phase="load")
    judge_document(doc)
    assert flag(doc, "stall") is None


def test_the_spec_names_the_threshold() -> None:
    assert SpecPolicy.model_validate({"max_stall_s": 12}).max_stall_s == 12
    with pytest.raises(ValueError, match="max_stall_s"):
        SpecPolicy.model_validate({"max_stall_s": 0})
