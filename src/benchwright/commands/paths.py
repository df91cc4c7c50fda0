"""Output paths checked when the command line is parsed, before any benchmark runs.

A ``--json`` or ``--out`` path that cannot be written used to fail only after the measurement, losing
the result and its summary. These argparse types refuse such a path at once, naming it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def _writable_dir(directory: Path, shown: str) -> None:
    if not directory.exists():
        raise argparse.ArgumentTypeError(f"{shown}: directory {directory} does not exist")
    if not directory.is_dir():
        raise argparse.ArgumentTypeError(f"{shown}: {directory} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{shown}: directory {directory} is not writable")


def output_file(value: str) -> Path:
    """A file we will write: not a directory, in an existing writable directory."""
    path = Path(value)
    if not value or path.is_dir():
        raise argparse.ArgumentTypeError(f"{value or '(empty)'}: is a directory, not a file")
    _writable_dir(path.parent if str(path.parent) else Path("."), value)
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{value}: not writable")
    return path


def output_dir(value: str) -> Path:
    """A directory we will create or fill: its nearest existing ancestor must be a writable directory."""
    path = Path(value)
    if not value:
        raise argparse.ArgumentTypeError("(empty): not a directory")
    if path.exists():
        if not path.is_dir():
            raise argparse.ArgumentTypeError(f"{value}: exists and is not a directory")
        _writable_dir(path, value)
        return path
    ancestor = path.absolute().parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    _writable_dir(ancestor, value)
    return path
