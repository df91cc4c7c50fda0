"""Two benchmarks measuring on one host at once are detected by both, whichever started first.

flock locks belong to an open file description, so two MeasuringLocks in one process conflict as two
processes' would; one test also holds a lock from a real child process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchwright.report.sample import make_document
from benchwright.runner.host_lock import MeasuringLock, flag_concurrent


def test_overlapping_phases_of_two_runs_see_each_other(tmp_path: Path) -> None:
    first = MeasuringLock("run-a", "c1", "run", tmp_path).start()
    second = MeasuringLock("run-b", "c1", "run", tmp_path).start()
    inside = second.finish()  # began and ended inside the first's phase
    outside = first.finish()
    assert [e["run_id"] for e in inside] == ["run-a"]  # still measuring: its lock is held
    assert [e["run_id"] for e in outside] == ["run-b"]  # ended meanwhile: its window overlaps
    doc = make_document([1000.0] * 12)
    flag_concurrent(doc, first, outside)
    [flag] = [f for f in doc.validity if f.code == "concurrent_benchmark"]
    assert flag.severity == "invalid" and "run run-b cell c1" in flag.message
    assert not doc.valid


def test_phases_one_after_another_and_runners_of_one_run_do_not(tmp_path: Path) -> None:
    assert MeasuringLock("run-a", "c1", "run", tmp_path).start().finish() == []
    assert MeasuringLock("run-b", "c1", "run", tmp_path).start().finish() == []  # a's phase had ended
    fan_a = MeasuringLock("run-c", "c1", "run", tmp_path).start()
    fan_b = MeasuringLock("run-c", "c1", "run", tmp_path).start()  # runner_count 2, one host
    assert fan_b.finish() == [] and fan_a.finish() == []


def test_a_benchmark_measuring_in_another_process_is_seen(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from benchwright.runner.host_lock import MeasuringLock; "
            f"lock = MeasuringLock('other', 'c9', 'run', Path({str(tmp_path)!r})).start(); "
            "print('locked', flush=True); sys.stdin.readline(); lock.finish()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        mine = MeasuringLock("mine", "c1", "run", tmp_path).start()
        [other] = mine.finish()
        assert other["run_id"] == "other" and other["pid"] == holder.pid
    finally:
        holder.communicate("done\n", timeout=30)
    assert holder.returncode == 0


def test_a_host_that_cannot_be_checked_says_so(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    lock = MeasuringLock("run-a", "c1", "run", blocked / "sub").start()  # a file where a directory belongs
    assert lock.finish() == []
    doc = make_document([1000.0] * 12)
    flag_concurrent(doc, lock, [])
    assert [f.code for f in doc.validity if f.severity == "info"] == ["host_unchecked"]
    assert doc.valid
