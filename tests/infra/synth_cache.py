"""The synthesized stack's template, cached on disk by a hash of everything it is made from.

A synth costs 10-25 s of CPU (jsii starts node, cdk-nag walks every construct). Each pytest-xdist
worker used to synthesize the same stack again, and so did every later run with nothing changed.
Here the first process to need a template synthesizes it under the rehearsal's build lock
(benchwright.rehearse.cache_lock) while the others wait,
and every process after it reads the JSON. The key covers the CDK context (the stage settings),
the sources the app imports (infra/, functions/, src/benchwright/, statemachines/, cdk.json), the
suite specs the stage names (with the files beside them), and the installed CDK libraries'
versions, so a changed input is a new key and a stale template is never read. A synth that fails
writes nothing: the next caller tries again and fails the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from benchwright.rehearse.cache_lock import building

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("infra", "functions", "statemachines", "src/benchwright")
LIBRARIES = ("aws-cdk-lib", "cdk-nag", "constructs", "jsii")
SKIPPED = {"__pycache__", "node_modules"}


def _files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not SKIPPED & set(path.parts) and path.suffix not in {".pyc", ".so"}:
            yield path


def _suites(context: dict[str, Any]) -> list[Path]:
    stage = context.get("benchwright") or {}
    named = (stage.get("schedule") or {}).get("suite") or ["infra/nightly.yaml"]
    return [p if p.is_absolute() else ROOT / p for p in map(Path, named)]


def key(context: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(context, sort_keys=True).encode())
    files = [ROOT / "cdk.json", *(f for source in SOURCES for f in _files(ROOT / source))]
    for suite in _suites(context):
        files += sorted(p for p in suite.parent.glob("*") if p.is_file()) if suite.is_file() else [suite]
    for path in files:
        digest.update(str(path).encode())
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
    for library in LIBRARIES:
        try:
            digest.update(f"{library}=={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{library} absent".encode())
    return digest.hexdigest()[:24]


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "benchwright" / "test-synth"


def template(
    context: dict[str, Any], synthesize: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """``synthesize(context)``'s template, from the cache when its inputs were synthesized before."""
    folder = cache_dir()
    path = folder / f"{key(context)}.json"
    if not path.is_file():
        with building(path):  # one synth per key (the rehearsal's lock): the other workers wait for it
            if not path.is_file():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(synthesize(context)))
                tmp.replace(path)
                _prune(folder)
    cached: dict[str, Any] = json.loads(path.read_text())
    return cached


def _prune(folder: Path, keep_days: float = 7) -> None:
    """Templates of inputs nobody has synthesized for a week go (each change of a source makes one)."""
    old = time.time() - keep_days * 86400
    for stale in folder.glob("*.json"):
        if stale.stat().st_mtime < old:
            stale.unlink(missing_ok=True)
            stale.with_name(f"{stale.name}.lock").unlink(missing_ok=True)
