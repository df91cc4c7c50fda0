"""The local runner launcher: the runner's entry point (``runner.entry``) as a subprocess.

The plan file holds no password; the child gets it in ``BENCHWRIGHT_DB_PASSWORD`` (environment only).
The child runs in its own session so a terminal Ctrl-C reaches the orchestrator alone, which then asks
the runner to stop (SIGINT) and collects the partial result the runner writes on the way out.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import psutil

import benchwright
from benchwright.errors import RunnerFailed
from benchwright.providers.base import (
    Credentials,
    RunnerHandle,
    RunnerLauncher,
    RunnerStatus,
    Target,
)
from benchwright.providers.local.pidfiles import register_process, unregister_process
from benchwright.results import ResultDocument
from benchwright.runner.entry import PASSWORD_ENV, SECRET_ARN_ENV, SPILL_ENV, runner_argv
from benchwright.runner.plan import RunnerPlan
from benchwright.runner_output import RunnerOutput

_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def runner_command(plan: Path, out: Path) -> list[str]:
    """The one runner argv, with this interpreter (the runner module alone: fast start-up)."""
    return runner_argv(str(plan), str(out), python=sys.executable)


def child_environment(credentials: Credentials) -> dict[str, str]:
    """Our environment plus the secret, minus any stale secret, with benchwright importable."""
    env = {k: v for k, v in os.environ.items() if k not in (PASSWORD_ENV, SECRET_ARN_ENV)}
    env.update(credentials.environment())
    src = str(Path(benchwright.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class SubprocessLauncher(RunnerLauncher):
    """``spill_root``: a directory on another filesystem than ``work_dir`` (next to the result store),
    where the runner keeps its output when ``work_dir`` is full, and where a runner's files go when
    ``work_dir`` cannot take them at launch. ``spilled`` names the outputs read from there."""

    def __init__(self, work_dir: Path, spill_root: Path | None = None) -> None:
        self.work_dir = Path(work_dir)
        self.spill_root = spill_root
        self.spilled: set[str] = set()

    def _cell_dir(self, root: Path, plan: RunnerPlan) -> Path:
        return root / _safe(plan.cell_id) / f"repeat-{plan.repeat}"

    def launch(self, plan: RunnerPlan, credentials: Credentials, target: Target) -> RunnerHandle:
        stem = f"runner-{plan.runner_index}"
        spill_dir = self._cell_dir(self.spill_root / plan.run_id, plan) if self.spill_root else None
        cell_dir = self._cell_dir(self.work_dir, plan)
        try:
            cell_dir.mkdir(parents=True, exist_ok=True)
            (cell_dir / f"{stem}-plan.json").write_text(plan.model_dump_json(indent=1))
        except OSError:
            if spill_dir is None:
                raise
            cell_dir = spill_dir  # the output directory is full: this runner's files go to the spill
            self.spilled.add(str(cell_dir / f"{stem}-result.json"))
            cell_dir.mkdir(parents=True, exist_ok=True)
            (cell_dir / f"{stem}-plan.json").write_text(plan.model_dump_json(indent=1))
        plan_path = cell_dir / f"{stem}-plan.json"
        out_path = cell_dir / f"{stem}-result.json"
        log_path = cell_dir / f"{stem}.log"
        env = child_environment(credentials)
        details = {"pid": "", "run_id": plan.run_id}
        if spill_dir is not None and spill_dir != cell_dir:
            spill_dir.mkdir(parents=True, exist_ok=True)
            env[SPILL_ENV] = details["spill"] = str(spill_dir / f"{stem}-result.json")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                runner_command(plan_path, out_path),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        _CHILDREN[proc.pid] = proc
        register_process(plan.run_id, "runner", proc.pid)
        return RunnerHandle(
            id=str(proc.pid),
            runner_index=plan.runner_index,
            result_pointer=str(out_path),
            log_pointer=str(log_path),
            launched_at=datetime.now(UTC),
            details={**details, "pid": str(proc.pid)},
        )

    def _proc(self, handle: RunnerHandle) -> subprocess.Popen[bytes] | None:
        return _CHILDREN.get(int(handle.id))

    def status(self, handle: RunnerHandle) -> RunnerStatus:
        proc = self._proc(handle)
        if proc is None:
            return "failed"
        code = proc.poll()
        if code is None:
            return "running"
        if code != 0:
            _kill_group(proc.pid)  # a crashed runner's worker processes must not outlive it
        unregister_process(handle.details.get("run_id", ""), "runner", proc.pid)
        return "succeeded" if code == 0 else "failed"

    def wait(self, handle: RunnerHandle, timeout: float) -> int | None:
        proc = self._proc(handle)
        if proc is None:
            return None
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, handle: RunnerHandle) -> None:
        """SIGINT (the runner keeps the partial phase), then SIGKILL if it does not exit in 30 s."""
        proc = self._proc(handle)
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait(10)
        if proc.returncode != 0:
            _kill_group(proc.pid)
        unregister_process(handle.details.get("run_id", ""), "runner", proc.pid)

    def output(self, handle: RunnerHandle) -> RunnerOutput | None:
        """What the runner wrote so far; None before its first write (it writes before any phase).
        The newer of its output and its spill (written when the output's disk was full)."""
        found = []
        for where in (handle.result_pointer, handle.details.get("spill")):
            with contextlib.suppress(OSError):
                if where:
                    found.append((Path(where).stat().st_mtime_ns, where))
        if not found:
            return None
        _, where = max(found)
        if where != handle.result_pointer:
            self.spilled.add(handle.result_pointer)
        try:
            text = Path(where).read_text()
        except OSError:
            return None
        try:
            return RunnerOutput.parse(text)
        except ValueError as exc:
            raise RunnerFailed(f"runner output {where} is unreadable: {exc}") from None

    def results(self, handle: RunnerHandle) -> list[ResultDocument]:
        output = self.output(handle)
        return output.kept_documents() if output is not None else []

    def failure(self, handle: RunnerHandle) -> str | None:
        proc = self._proc(handle)
        code = proc.poll() if proc is not None else None
        output = self.output(handle)
        error = output.error if output is not None else None
        if code in (0, None) and not error:
            return None
        tail = ""
        if handle.log_pointer:
            with contextlib.suppress(OSError):
                lines = Path(handle.log_pointer).read_text(errors="replace").strip().splitlines()
                tail = lines[-1] if lines else ""
        reason = str(error) if error else (tail or "no output")
        return f"runner (pid {handle.id}) exited with {code}: {reason}"


def _kill_group(pgid: int, wait_s: float = 5.0) -> None:
    """SIGKILL what is left of a runner's process group (it is the leader of its own session) and
    wait until those processes are gone, so teardown never overlaps a dying worker."""
    members = [p for p in psutil.process_iter() if _group_of(p) == pgid]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    psutil.wait_procs(members, timeout=wait_s)


def _group_of(process: psutil.Process) -> int | None:
    try:
        return os.getpgid(process.pid)
    except (ProcessLookupError, PermissionError):
        return None


def _safe(cell_id: str) -> str:
    from benchwright.specguard import path_component

    return path_component(cell_id)
