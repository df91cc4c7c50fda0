"""The Lambda asset a rehearsal runs its handlers from: what `cdk synth` bundles, for this interpreter.

The same builder as the deployed asset (infra/lambda_asset.py: the same requirement list, our code,
uPlot), with wheels for the interpreter at hand, since the Lambda runtime's Python is not installable
here. Cached by the asset's own hash (the one the stack gives the deployed asset) and the Python
version, so a second rehearsal of the same sources reuses it.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from benchwright.rehearse.cache_lock import building
from benchwright.rehearse.stack import RehearsalError

_DONE = ".benchwright-asset-complete"


@dataclass(frozen=True)
class Asset:
    path: Path
    hash: str  # infra.lambda_asset.source_hash: the deployed asset's custom hash
    python: str  # the interpreter its wheels are for, and the one the handlers run in

    def describe(self) -> dict[str, str]:
        return {"asset_hash": self.hash, "asset_path": str(self.path), "interpreter": self.python}


def interpreter() -> str:
    version = sys.version.split()[0]
    return f"{sys.executable} (CPython {version})"


def lambda_asset(root: Path, cache_dir: Path | None = None) -> Asset:
    """The built asset for the sources in ``root`` (built now unless cached)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from infra.lambda_asset import source_hash  # no aws_cdk: Node stays out of this process

    digest = source_hash(root)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    cache = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "benchwright"
    path = cache / f"lambda-asset-{digest[:20]}-py{version}"
    if not (path / _DONE).is_file():
        with building(path):  # another rehearsal (an xdist worker) may be building it now
            if not (path / _DONE).is_file():
                _build(root, path, digest, version)
    return Asset(path, digest, interpreter())


def _build(root: Path, path: Path, digest: str, version: str) -> None:
    """Build the asset beside ``path`` and move it into place once complete."""
    from infra.lambda_asset import build_asset

    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        build_asset(tmp, root, sys.executable, version)
    except RuntimeError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RehearsalError(f"the Lambda asset could not be built: {exc}") from None
    (tmp / _DONE).write_text(digest)
    try:
        tmp.rename(path)
    except OSError:  # a copy left by a build that did not hold the lock
        shutil.rmtree(tmp, ignore_errors=True)
        if not (path / _DONE).is_file():
            raise
