"""Local providers: throwaway servers or a named endpoint, subprocess runners, /proc metrics, SQLite.

``local_providers`` bundles them for the local orchestrator (benchwright.local).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchwright.errors import SpecError
from benchwright.providers.base import ArtifactStore, Notifier, PriceBook, Providers, ResultStore, Target
from benchwright.spec import LocalTarget, NotifySpec, TargetSpec


def local_target(spec: TargetSpec, run_id: str, handle: Mapping[str, str] | None = None) -> Target:
    """The Target for a ``local`` spec target section (a throwaway server, by its engine), or for a
    database someone else runs that a local run reaches where it answers: each such class names the
    spec model it serves (``serves``), so the choice is by model, never by a provider's name."""
    from benchwright.providers.local.endpoint import EndpointTarget
    from benchwright.providers.local.servers import SERVERS

    if isinstance(spec, LocalTarget):
        return SERVERS[spec.engine](spec, run_id, handle)
    for existing in (EndpointTarget,):
        if isinstance(spec, existing.serves):
            return existing(spec, run_id, handle)
    raise SpecError(
        "target.provider", f"{spec.provider!r} targets need the AWS providers; locally use local | endpoint"
    )


class DirectoryArtifacts(ArtifactStore):
    """JSON files under the run's output directory; the pointer is the file path."""

    per_run = True  # one directory per run: keys need no run id

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def put_json(self, key: str, data: Any) -> str:
        path = self.root / key
        if ".." in Path(key).parts or Path(key).is_absolute():
            raise ValueError(f"artifact key {key!r} would leave {self.root}")
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace(path, json.dumps(data, default=str))
        return str(path)

    def get_json(self, pointer: str) -> Any:
        return json.loads(Path(pointer).read_text())

    def put_report(self, run_id: str, html: str) -> str:
        """``<out dir>/report.html``: the run's directory is already its own."""
        path = self.root / "report.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace(path, html)
        return str(path)


def _replace(path: Path, text: str) -> None:
    """Write by rename, so no reader sees half a file; a write that fails (a full disk) leaves neither
    a partial file nor its ``.tmp``."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


class FreePriceBook(PriceBook):
    """Local runs cost nothing we can price: a zero estimate that says so."""

    def estimate(self, spec: Any, cell: Any, duration_s: float) -> Any:
        from benchwright.runs import CostEstimate

        return CostEstimate(
            total=0.0, items={}, ops_per_dollar=None, monthly_nightly=0.0, source="local (free)"
        )


class SilentNotifier(Notifier):
    def notify(self, record: Any, report_url: str | None = None, *, site_url: str | None = None) -> bool:
        return False


def default_notifier(notify: NotifySpec | None) -> Notifier:
    """Every notifier the spec configures, through its kind's local sender (benchwright.notifiers);
    none: silent. Slack locally needs a webhook environment variable: a Secrets Manager webhook is an
    AWS-side setting, skipped here (the run is unaffected).
    ``notify.on`` is applied by the finish stage (benchwright.stages.finish), not here.
    """
    if notify is None:
        return SilentNotifier()
    from benchwright.notifiers.registry import get

    found: list[Notifier] = []
    for name, section in notify.configured():
        kind = get(name)
        notifier = kind.local(section) if kind is not None else None
        if notifier is not None:
            found.append(notifier)
    if not found:
        return SilentNotifier()
    if len(found) == 1:
        return found[0]
    from benchwright.providers.local.notify import MultiNotifier

    return MultiNotifier(*found)


def open_local_store(path: str | Path | None = None) -> ResultStore:
    from benchwright.providers.local.sqlite_store import open_store

    return open_store(path)


def local_providers(
    out_dir: Path, store: ResultStore | None = None, notifier: Notifier | None = None, interval: float = 1.0
) -> Providers:
    from benchwright.providers.local.hostmetrics import ProcMetricsSource
    from benchwright.providers.local.runner import SubprocessLauncher

    store = store if store is not None else open_local_store()
    store_path = getattr(store, "path", None)
    # the runners' second place for their output, on the store's filesystem: a full out_dir loses
    # nothing the store has room for (providers/local/runner.py)
    spill = Path(store_path).parent / "spill" if isinstance(store_path, (str, Path)) else None
    return Providers(
        target=local_target,
        launcher=SubprocessLauncher(out_dir, spill),
        metrics=ProcMetricsSource(interval),
        store=store,
        notifier=notifier if notifier is not None else SilentNotifier(),
        prices=FreePriceBook(),
        artifacts=DirectoryArtifacts(out_dir),
    )
