"""Issue 14, item 7: SIGTERM / SIGHUP end `benchwright run` like Ctrl-C; after a SIGKILL the next
command finds the orphaned server and runner by this tool's pid files, stops them and marks the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.runs import RunRecord
from tests.e2e.test_local_service import SLOW_SPEC, accepting, cli, env, finish, in_process_group, read_until

pytestmark = [pytest.mark.servers, pytest.mark.slow]


# How a shell starts a background job without job control (`benchwright run ... &` in a script):
# SIGINT ignored, and an ignored signal stays ignored across exec
AS_BACKGROUND_JOB = ["sh", "-c", "trap '' INT; exec \"$@\"", "sh"]
# Every run here starts with SIGHUP at its default, as from a terminal. Under nohup (a CI script
# started so) it would inherit an ignored SIGHUP, which `benchwright run` keeps ignoring on purpose:
# the hang-up test would then wait out the whole phase.
WITH_DEFAULT_HUP = [
    sys.executable, "-c",
    "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])",
]  # fmt: skip


@pytest.fixture
def run(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[subprocess.Popen[str], Path, Path, dict[str, str]]]:
    spec = tmp_path / "slow.yaml"
    spec.write_text(SLOW_SPEC)
    out, store = tmp_path / "out", tmp_path / "store.sqlite"
    environment = {**env(), "BENCHWRIGHT_STATE_DIR": str(tmp_path / "state")}
    prefix = AS_BACKGROUND_JOB if getattr(request, "param", "") == "background" else []
    proc = subprocess.Popen(
        [*WITH_DEFAULT_HUP, *prefix, *cli("run", str(spec), "--out", str(out), "--store", str(store))],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        cwd=tmp_path,
    )
    yield proc, out, store, environment
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    subprocess.run(
        cli("cleanup"), capture_output=True, env=environment, timeout=120
    )  # a failed test's orphans


@pytest.mark.parametrize(
    ("run", "sig"),
    [("foreground", signal.SIGTERM), ("foreground", signal.SIGHUP), ("background", signal.SIGTERM)],
    indirect=["run"],
)
def test_sigterm_and_sighup_tear_down_like_ctrl_c(
    run: tuple[subprocess.Popen[str], Path, Path, dict[str, str]], sig: signal.Signals
) -> None:
    proc, out, _store, environment = run
    lines: list[str] = []
    port = int(read_until(proc, r"target ready: 127\.0\.0\.1:(\d+)", lines).group(1))
    read_until(proc, r"phase run \d+ s, [\d,]+ ops", lines)
    proc.send_signal(sig)
    output = finish(proc, lines)
    assert proc.returncode == 130, output[-3000:]
    assert not accepting(port)
    record = RunRecord.model_validate_json((out / "run.json").read_text())
    assert record.status == "aborted" and record.cells[0].phases["run"].operations_total > 0
    live = Path(environment["BENCHWRIGHT_STATE_DIR"]) / "live"
    assert not any(live.iterdir())  # nothing left for a later cleanup


def test_after_sigkill_the_next_command_stops_the_orphans_and_marks_the_run(
    run: tuple[subprocess.Popen[str], Path, Path, dict[str, str]],
) -> None:
    proc, _out, store, environment = run
    lines: list[str] = []
    port = int(read_until(proc, r"target ready: 127\.0\.0\.1:(\d+)", lines).group(1))
    runner_pid = int(read_until(proc, r"runner started \(pid (\d+)\)", lines).group(1))
    read_until(proc, r"phase run \d+ s, [\d,]+ ops", lines)
    proc.kill()
    proc.wait(10)
    assert accepting(port) and psutil.pid_exists(runner_pid)  # what SIGKILL leaves behind
    servers = [
        p
        for p in psutil.process_iter(["cmdline"])
        if any("benchwright-redis-" in a for a in p.info["cmdline"] or [])
    ]
    data_dirs = {a.rsplit("/", 1)[0] for p in servers for a in p.info["cmdline"] if "benchwright-redis-" in a}

    # any later command cleans up first; `history` is a cheap one
    later = subprocess.run(
        cli("history", "interrupt-me", "--store", str(store)),
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert later.returncode == 0, later.stderr
    assert "cleanup: run" in later.stderr and "marked aborted" in later.stderr
    assert not accepting(port)
    assert not in_process_group(runner_pid)
    assert not any(os.path.exists(d) for d in data_dirs)
    with SQLiteResultStore(store) as s:
        (record,) = s.history("interrupt-me")
    assert record.status == "aborted" and "killed" in (record.error or "")
    again = subprocess.run(cli("cleanup"), capture_output=True, text=True, env=environment, timeout=60)
    assert again.returncode == 0 and "nothing left behind" in again.stdout
