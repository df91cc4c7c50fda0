"""Throwaway local servers whose creator died (a test killed by a timeout) are stopped by the next
sweep of the same checkout; a server whose creator still runs is left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from benchwright.providers.local import local_target, stray
from benchwright.providers.local.servers import LocalServer
from benchwright.spec import parse_target

pytestmark = pytest.mark.servers

CREATOR = """
import sys
from benchwright.providers.local import local_target
from benchwright.spec import parse_target
target = local_target(parse_target({"provider": "local", "engine": "redis"}), "stray-test")
target.create()
print(target.handle["pid"], target.handle["dir"], flush=True)
sys.stdin.read()  # lives until the test kills it
"""


def gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_server_whose_creator_was_killed_is_stopped_by_the_sweep_and_a_live_one_is_not() -> None:
    creator = subprocess.Popen(
        [sys.executable, "-c", CREATOR], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert creator.stdout is not None
    pid_text, directory = creator.stdout.readline().split()
    pid = int(pid_text)
    alive = local_target(parse_target({"provider": "local", "engine": "redis"}), "stray-test")
    assert isinstance(alive, LocalServer)
    alive.create()
    alive_pid = int(alive.handle["pid"])
    try:
        record = json.loads((stray.records_dir() / f"server-{pid}.json").read_text())
        assert record["owner"] == creator.pid and record["dir"] == directory
        assert stray.sweep() == []  # its creator still runs: nothing is touched
        assert not gone(pid)

        os.kill(creator.pid, signal.SIGKILL)  # as pytest-timeout or a CI cancel would
        creator.wait()
        assert not gone(pid), "the creator's death alone does not stop its server: that is the leak"

        assert stray.sweep() == [pid]
        assert gone(pid) and not Path(directory).exists()
        assert not (stray.records_dir() / f"server-{pid}.json").exists()
        assert not gone(alive_pid)  # this process's server: its creator is alive
    finally:
        alive.delete()
        if not gone(pid):
            psutil.Process(pid).kill()
    assert not (stray.records_dir() / f"server-{alive_pid}.json").exists()  # delete forgets it
