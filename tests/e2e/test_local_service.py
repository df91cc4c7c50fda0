"""End to end through the CLI: `benchwright run` provisions throwaway servers, runs, stores, reports and
tears down; Ctrl-C and a crashing runner still tear down and keep the partial result, marked aborted."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.results import ResultDocument
from benchwright.runs import RunRecord

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchwright.cli", *args]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "160", "PYTHONUNBUFFERED": "1"}


def accepting(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def in_process_group(pgid: int) -> list[int]:
    found = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return found


def ports_in(output: str) -> list[int]:
    return [int(p) for p in re.findall(r"target ready: 127\.0\.0\.1:(\d+)", output)]


def test_quickstart_runs_end_to_end_at_reduced_size(tmp_path: Path) -> None:
    out, store = tmp_path / "out", tmp_path / "store.sqlite"
    result = subprocess.run(
        cli(
            "run",
            str(ROOT / "examples" / "quickstart.yaml"),
            "--quick",
            "--out",
            str(out),
            "--store",
            str(store),
        ),
        capture_output=True,
        text=True,
        env=env(),
        timeout=240,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in ("quickstart-redis", "quickstart-postgres"):
        assert (out / name / "report.html").stat().st_size > 1000
        record = RunRecord.model_validate_json((out / name / "run.json").read_text())
        assert record.status == "succeeded"
        run = record.cells[0].phases["run"]
        assert run.operations_total > 0 and run.throughput > 0
        assert {m.source for m in record.cells[0].metrics} == {"proc:host", "proc:server"}
        # --out DIR holds the runner's result documents (one list per runner) next to report.html
        documents = sorted((out / name).rglob("runner-*-documents.json"))
        assert documents, sorted(p.name for p in (out / name).rglob("*"))
        docs = [ResultDocument.parse(d) for path in documents for d in json.loads(path.read_text())]
        assert {d.phase for d in docs} >= {"run"} and all(d.run_id == record.run_id for d in docs)
        assert f"report: {out / name / 'report.html'}" in result.stdout
        # `benchwright report RUN` rebuilds the report from the store alone
        again = tmp_path / f"{name}-again.html"
        rep = subprocess.run(
            cli("report", record.run_id, "--store", str(store), "--out", str(again)),
            capture_output=True,
            text=True,
            env=env(),
            timeout=60,
            cwd=tmp_path,
        )
        assert rep.returncode == 0, rep.stderr[-2000:]
        html = again.read_text()
        assert record.run_id in html and name in html and 'class="chart-spec"' in html  # uPlot charts
    assert "report:" in result.stdout
    ports = ports_in(result.stdout)
    assert len(ports) == 2 and not any(accepting(p) for p in ports)  # both servers are gone
    with SQLiteResultStore(store) as s:
        assert [r.status for r in s.history("quickstart-redis")] == ["succeeded"]


SLOW_SPEC = """
name: interrupt-me
target: {provider: local, engine: redis}
workload:
  name: ycsb
  files: [workloada]
  properties: {recordcount: 200}
  phases:
    load: {threads: 1}
    run: {threads: 2, duration_s: 120, target_rate: 500}
"""


@pytest.fixture
def slow_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path, Path]]:
    spec = tmp_path / "slow.yaml"
    spec.write_text(SLOW_SPEC)
    out, store = tmp_path / "out", tmp_path / "store.sqlite"
    proc = subprocess.Popen(
        cli("run", str(spec), "--out", str(out), "--store", str(store)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env(),
        cwd=tmp_path,
    )
    yield proc, out, store
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def read_until(
    proc: subprocess.Popen[str], pattern: str, lines: list[str], limit_s: float = 90
) -> re.Match[str]:
    """Read the run's output line by line until ``pattern`` appears (bounded in time)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        match = re.search(pattern, line)
        if match:
            return match
    raise AssertionError(f"{pattern!r} never appeared:\n{''.join(lines)[-3000:]}")


def finish(proc: subprocess.Popen[str], lines: list[str]) -> str:
    rest, _ = proc.communicate(timeout=90)
    return "".join(lines) + rest


def test_ctrl_c_tears_down_and_stores_the_partial_result(
    slow_run: tuple[subprocess.Popen[str], Path, Path],
) -> None:
    proc, out, store = slow_run
    lines: list[str] = []
    port = int(read_until(proc, r"target ready: 127\.0\.0\.1:(\d+)", lines).group(1))
    read_until(proc, r"phase run \d+ s, [\d,]+ ops", lines)  # a progress line: the runner is measuring
    assert accepting(port)
    proc.send_signal(signal.SIGINT)
    output = finish(proc, lines)
    assert proc.returncode == 130, output[-3000:]
    assert "torn down" in output
    assert not accepting(port)
    record = RunRecord.model_validate_json((out / "run.json").read_text())
    assert record.status == "aborted"
    run = record.cells[0].phases["run"]
    assert run.aborted and any(f.code == "interrupted" for f in run.validity)
    assert run.operations_total > 0  # what was measured before Ctrl-C is kept
    with SQLiteResultStore(store) as s:
        stored = s.get_run(record.run_id)
    assert stored is not None and stored.status == "aborted" and stored.cells


def test_a_killed_runner_tears_down_and_marks_the_run_aborted(
    slow_run: tuple[subprocess.Popen[str], Path, Path],
) -> None:
    proc, out, _store = slow_run
    lines: list[str] = []
    port = int(read_until(proc, r"target ready: 127\.0\.0\.1:(\d+)", lines).group(1))
    runner_pid = int(read_until(proc, r"runner started \(pid (\d+)\)", lines).group(1))
    read_until(proc, r"phase run started", lines)
    os.kill(runner_pid, signal.SIGKILL)
    output = finish(proc, lines)
    assert proc.returncode == 1, output[-3000:]
    assert not accepting(port)
    assert not in_process_group(runner_pid)  # the runner's worker processes went with it
    record = RunRecord.model_validate_json((out / "run.json").read_text())
    assert record.status == "aborted"
    assert "RunnerFailed" in (record.error or "")
    cell = record.cells[0]
    assert "load" in cell.phases  # the phase finished before the crash is kept
    assert any(f.code == "aborted" and f.severity == "invalid" for f in cell.validity)


def test_an_invalid_spec_starts_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(SLOW_SPEC.replace("recordcount: 200", "recordcount: 200, readproportion: 2"))
    result = subprocess.run(
        cli("run", str(spec), "--out", str(tmp_path / "out"), "--store", str(tmp_path / "s.db")),
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert "workload.properties.readproportion" in result.stderr
    assert not (tmp_path / "out").exists()
    assert "provisioning" not in result.stdout
