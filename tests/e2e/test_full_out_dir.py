"""A full ``--out`` mid-run loses no measured operation, and the exit code says what failed.

The review filled the output directory's disk mid-run: the run was stored as failed with 0 cells and
808,000 measured operations were lost, although the store had room; full at the end, the command
exited 0 with a 0-byte run.json. Here the output directory is on a 1 MB tmpfs of the test's own (a
private mount namespace: ``unshare -rm``), the store on the test's ordinary disk, and a filler
fills the tmpfs the moment the runner's output says the measured phase began. Every later write to
``--out`` fails with ENOSPC, for real: the runner's output after the phase, the cell's documents,
the report and run.json.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from benchwright.cli import main
from benchwright.outcome import EXIT_FILES
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from tests.runner.conftest import Background

pytestmark = pytest.mark.servers  # a throwaway redis-server of its own (the local provider)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs of the test's own, mounted in a private mount namespace (``unshare -rm``) held
    open by a sleeping process, and reached from here through that process's root (/proc/PID/root)."""
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    script = 'mount -t tmpfs -o size=1m tmpfs "$1" && echo mounted && exec sleep 600'
    holder = subprocess.Popen(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(mountpoint)], stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"mounted\n"
        yield Path(f"/proc/{holder.pid}/root{mountpoint}")
    finally:
        holder.kill()
        holder.wait()


def fill_when_the_phase_began(result: Path, out: Path, filled: list[bool]) -> None:
    """Wait (bounded: 120 s) until the runner's output says the measured phase began, then write
    until the disk is full."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if "run" in json.loads(result.read_text()).get("started", {}):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)  # polling the runner's own output file: the phase has begun
    else:
        raise AssertionError("the measured phase never began")
    with open(out / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            filled.append(True)


def namespaces_work() -> bool:
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not namespaces_work(), reason="no unprivileged mount namespace (unshare -rm) here")
def test_a_full_out_dir_mid_run_keeps_every_measured_operation_and_exits_6(
    tmp_path: Path, tiny_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {
        "name": "full-out",
        "target": {"provider": "local", "engine": "redis", "settings": {"appendonly": "no"}},
        "matrix": {},
        "workload": {
            "name": "ycsb",
            "properties": {
                "recordcount": 1000,
                "fieldcount": 1,
                "readproportion": 0.5,
                "updateproportion": 0.5,
            },
            "phases": {"load": {"threads": 1}, "run": {"threads": 2, "duration_s": 3}},
        },
    }
    spec_path = tmp_path / "full-out.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    out, store = tiny_disk / "out", tmp_path / "store" / "runs.sqlite"
    filled: list[bool] = []
    filler = Background(
        lambda: fill_when_the_phase_began(
            out / "default" / "repeat-0" / "runner-0-result.json", tiny_disk, filled
        )
    )
    filler.start()
    code = main(["run", str(spec_path), "--out", str(out), "--store", str(store)])
    filler.join()
    said = capsys.readouterr().out
    assert filled  # the disk really was full while the phase ran
    assert code == EXIT_FILES, said
    assert "file(s) not written" in said and "No space left on device" in said
    files = {str(p.relative_to(out)): p.stat().st_size for p in out.rglob("*") if p.is_file()}
    assert files.get("run.json", 1) > 0, files  # never a 0-byte run.json
    assert not [name for name in files if name.endswith(".tmp")], files

    stored = SQLiteResultStore(store)
    [(run_id, *_)] = stored.list_runs("full-out")
    record = stored.get_run(run_id)
    assert record is not None and record.status == "succeeded", (record and record.error, said)
    [cell] = record.cells
    run = cell.phases["run"]
    assert run.operations_total > 0 and run.failed_total == 0
    # the runner's own last output, kept next to the store because --out could not take it
    [spilled] = (store.parent / "spill" / run_id).rglob("runner-0-result.json")
    documents = {d["phase"]: d for d in json.loads(spilled.read_text())["documents"]}
    assert documents["run"]["operations_total"] == run.operations_total  # not one operation lost
    assert sum(s.operations for s in cell.phases["load"].operations.values()) == 1000
