"""Issue 14, item 13: a local server starts when $TMPDIR is private to us (mode 700), and a tool's
failure keeps its "Permission denied" line instead of the last 300 characters of its output."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.providers.local.server_os import tool_errors
from benchwright.providers.local.servers import wait_ready
from tests.runner.test_local_targets import assert_gone, start

pytestmark = pytest.mark.servers


@pytest.fixture
def private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    os.chmod(tmp_path, 0o700)
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile caches the directory it chose
    yield private
    tempfile.tempdir = None


@pytest.mark.skipif(os.geteuid() != 0, reason="servers run as their own users only when we are root")
def test_mariadb_starts_when_tmpdir_is_private(private_tmpdir: Path) -> None:
    target = start("mysql")
    handle = dict(target.handle)
    try:
        assert wait_ready(target, 90) == "ready", target.failure_reason()
        assert not Path(handle["dir"]).is_relative_to(private_tmpdir)  # somewhere mysql can reach
    finally:
        target.delete()
    assert_gone(int(handle["pid"]), int(handle["port"]), handle["dir"])


def test_a_tools_error_lines_survive_a_long_output() -> None:
    output = "2026-01-01 Installing\nmkdir: /x/y: Permission denied\n" + "noise line\n" * 200 + "Aborted\n"
    text = tool_errors(output)
    assert "Permission denied" in text and "Aborted" in text and len(text) <= 1500
