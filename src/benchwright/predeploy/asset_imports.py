"""Every handler imported from the Lambda asset alone, as Lambda imports it.

A package a handler needs but the asset lacks fails here, before a deploy, not on the first night.
The script runs in a fresh interpreter whose only imports are the stdlib and the asset (``python -I
-S``: no venv, no site-packages, no checkout): every module of functions/, every handler the stack
names, then what handlers import lazily on their paths (the Slack client of FinishRun's
notification, FinishRun's verdict across nights and its site refresh, which must not need numpy or
ruptures: the asset carries neither; a MySQL spec's validation, which must not need MySQLdb). Each output line names the
module it proves. tests/infra/test_bundling.py runs the same script on a freshly built asset.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ALONE_ENV = {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_SERVICE_NAME": "t"}

IMPORT_ALL = """
import importlib, pathlib, json
from functions import HANDLERS, JANITOR_HANDLER
asset = pathlib.Path(sys.argv[1])
modules = sorted("functions." + p.stem for p in (asset / "functions").glob("*.py") if p.stem != "__init__")
for name in modules:
    module = importlib.import_module(name)
    print("module", name, module.__file__.startswith(sys.argv[1]))
for target in [*HANDLERS.values(), JANITOR_HANDLER, "functions.api.handler"]:
    mod, func = target.rsplit(".", 1)
    print("handler", target, callable(getattr(importlib.import_module(mod), func)))
import benchwright.providers.aws.notify, benchwright.providers.local.notify  # FinishRun's notifier
from slack_sdk.webhook import WebhookClient
print("slack", WebhookClient.__module__, sys.modules["slack_sdk"].__file__.startswith(sys.argv[1]))
from datetime import timedelta
from benchwright.judge.nightly import nightly_verdict  # FinishRun's verdict across nights
from benchwright.report.sample import EPOCH, make_run, noisy_series
runs = [make_run("n", f"r{i}", [("c", {}, noisy_series(1000.0 if i < 4 else 700.0, 20, seed=i))],
                 started_at=EPOCH + timedelta(days=i), with_metrics=False) for i in range(5)]
print("nightly", nightly_verdict(runs[-1], runs).kind)
import tempfile  # FinishRun's site refresh (site/refresh.py): the store, the pages and the index
from benchwright.stages.finish_site import refresh_for
from benchwright.site.refresh import refresh_site, signer
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.site.nights import benchmarks
from benchwright.site.pages import benchmark_page, cell_views, index_page
with SQLiteResultStore(pathlib.Path(tempfile.mkdtemp()) / "site.sqlite") as store:
    for run in runs:
        store.save_run(run)
    judged = [(b, cell_views(b)) for b in benchmarks(store, 90)]
html = index_page(judged, "t", lambda rel: "https://signed/" + rel) + benchmark_page(*judged[0], "t")
print("site", len(judged), "https://signed/bench/n.html" in html and "<svg" in html,
      "numpy" in sys.modules or "ruptures" in sys.modules)
from benchwright.spec import load_spec
spec = load_spec(sys.argv[2])
from benchwright.spec import check_workload
check_workload(spec)
print("mysql-spec", spec.target.engine, "MySQLdb" in sys.modules)
try:
    import MySQLdb
    print("mysqldb present")
except ImportError:
    print("mysqldb absent")
"""

MYSQL_SPEC = Path("examples") / "exp3-rds-mysql-storage.aws.yaml"  # a MySQL target, validated in the asset


def alone(asset: Path, script: str, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh interpreter that imports only the stdlib and ``asset``."""
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, sys.argv[1]); {script}", str(asset), *args],
        capture_output=True, text=True, timeout=timeout_s, check=False, cwd=asset.parent, env=ALONE_ENV,
    )  # fmt: skip


def problems(done: subprocess.CompletedProcess[str], functions_dir: Path) -> list[str]:
    """What the import script's output says is wrong (empty: every handler imports from the asset)."""
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"the import script failed: {last}"]
    lines = done.stdout.splitlines()
    found: list[str] = []
    modules = {parts[1]: parts[2] for parts in (line.split() for line in lines) if parts[0] == "module"}
    expected = sorted(f"functions.{p.stem}" for p in functions_dir.glob("*.py") if p.stem != "__init__")
    found += [f"{name}: not in the asset" for name in expected if name not in modules]
    found += [
        f"{name}: imported from outside the asset" for name, inside in modules.items() if inside != "True"
    ]
    handlers = [line.split() for line in lines if line.startswith("handler ")]
    if not handlers:
        found.append("no handler was imported")
    found += [f"{h[1]}: not callable" for h in handlers if h[2] != "True"]
    if not any(line.startswith("slack ") and line.endswith(" True") for line in lines):
        found.append("slack_sdk: not imported from the asset (FinishRun's Slack notification)")
    if "nightly slower" not in lines:  # a 30 % drop after four nights, judged in the asset alone
        found.append("FinishRun's verdict across nights (judge/nightly.py) did not run from the asset alone")
    if "site 1 True False" not in lines:  # one benchmark's page and index, without numpy or ruptures
        found.append("FinishRun's site refresh (site/refresh.py) did not render from the asset alone")
    if not any(line.startswith("mysql-spec ") and line.endswith(" False") for line in lines):
        found.append("a MySQL spec's validation imported MySQLdb (the asset does not carry it)")
    return found


def check_asset(asset: Path, root: Path) -> list[str]:
    """Run the import script on ``asset``; its problems (see :func:`problems`)."""
    try:
        done = alone(asset, IMPORT_ALL, str(root / MYSQL_SPEC))
    except subprocess.TimeoutExpired:
        return ["the import script did not finish in 300 s"]
    return problems(done, root / "functions")
