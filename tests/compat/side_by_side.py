"""Run a native tool and Benchwright's mirror of it with the same command line, and compare what
they print, stream by stream, line by line, by shape (numbers masked)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
TIMEOUT_S = 120


@dataclass(frozen=True)
class Output:
    code: int
    out: str
    err: str


def run_native(argv: list[str], env: dict[str, str] | None = None) -> Output:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=_env(env), check=False)
    return Output(done.returncode, done.stdout, done.stderr)


def run_mirror(argv: list[str], env: dict[str, str] | None = None) -> Output:
    """``benchwright`` in a child process: real streams and exit code, as a script would see them."""
    command = [sys.executable, "-m", "benchwright.cli", *argv]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=TIMEOUT_S, env=_env(env), check=False
    )
    return Output(done.returncode, done.stdout, done.stderr)


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, **(extra or {})}


BAR = re.compile(r"\|\*+ *")
SPACES = re.compile(r"\s+")


def shape(line: str) -> str:
    """A line with its numbers, histogram bars and runs of blanks masked: its layout, not values."""
    return SPACES.sub(" ", BAR.sub("|BAR ", NUMBER.sub("N", line.rstrip())))


def shapes(text: str, drop: tuple[str, ...] = ()) -> list[str]:
    """The shapes of ``text``'s lines, without lines starting with one of ``drop``; a run of lines
    of one shape counts once (how many progress lines fit in a run is timing, not format)."""
    out: list[str] = []
    for line in text.splitlines():
        if line.strip() and not line.startswith(drop) and (not out or out[-1] != shape(line)):
            out.append(shape(line))
    return out
