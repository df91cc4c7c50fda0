"""One builder per cache entry across processes: the rehearsal tier runs under pytest-xdist, and on a
cold cache every worker's first rehearsal wants the same synthesized template and the same Lambda
asset at once. Without a lock each builds its own copy (a synth costs ~9 s of CPU, an asset ~5 s) and
all but one are thrown away; with it the others wait and read the one that was built."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def building(entry: Path) -> Iterator[None]:
    """Hold ``<entry>.lock`` (an advisory ``flock``, released when the process dies) while the caller
    checks for ``entry`` again and builds it if it is still missing."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.with_name(f"{entry.name}.lock"), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
