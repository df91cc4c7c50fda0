"""A report rendered from a real stored run: `benchwright run` of a two-cell YCSB matrix on a
throwaway local Redis (records 1000 and 1024, the values whose axis labels once collided), then
`benchwright report RUN --store` from the SQLite store, checked as data and as drawn by Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_report_chromium import by_title, dump
from tests.report_dom import chart, chart_specs, drawn_figures

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"}
HOSTILE = '<script>alert("owner")</script>'


def bw(*args: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "benchwright.cli", *args], capture_output=True, text=True,
                          timeout=420, cwd=cwd, env=ENV)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done.stdout


def test_report_of_a_real_stored_run(tmp_path: Path) -> None:
    spec = {
        "name": "report-real-run",
        "target": {"provider": "local", "engine": "redis", "settings": {"maxmemory": "64mb", "appendonly": "no"}},
        "workload": {
            "name": "ycsb",
            "files": ["workloada"],
            "properties": {"fieldcount": 2, "fieldlength": 20},
            "phases": {"load": {"threads": 2}, "run": {"threads": 2, "duration_s": 3}},
        },
        "matrix": {"workload.properties.recordcount": [1000, 1024]},
        "tags": {"owner": HOSTILE},
    }  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    store = tmp_path / "store.sqlite"
    bw("run", "spec.yaml", "--out", str(tmp_path / "out"), "--store", str(store), cwd=tmp_path)
    run_id = yaml.safe_load((tmp_path / "out" / "run.json").read_text())["run_id"]
    report = tmp_path / "again.html"
    bw("report", run_id, "--store", str(store), "--out", str(report), cwd=tmp_path)
    html = report.read_text()

    # the run's own report (finish stage) and the one rendered from the store are the same renderer
    finished = (tmp_path / "out" / "report.html").read_text()
    assert [c["title"] for c in chart_specs(finished)] == [c["title"] for c in chart_specs(html)]
    assert HOSTILE not in html and "&lt;script&gt;alert(&#34;owner&#34;)&lt;/script&gt;" in html
    dist = chart(html, "latency percentile distribution")
    assert {s["name"].split()[-1] for s in dist["series"]} == {"READ", "UPDATE"}
    assert len(dist["series"]) == 4  # each cell's READ and UPDATE from its stored histogram
    sweep = chart(html, "worst p99 latency vs recordcount")
    assert [s["name"] for s in sweep["series"]] == ["worst p99"] and sweep["data"][0] == [1000, 1024]
    assert [c["title"] for c in chart_specs(html)].count("recordcount=1000: throughput and CPU") == 1

    figures = drawn_figures(dump(report, tmp_path / "profile"))
    assert figures and all(f["drawn"] and not f["error"] for f in figures), figures
    for f in figures:
        assert len(set(f["x"])) == len(f["x"]) >= 2 and len(set(f["y"])) == len(f["y"]) >= 2, f
    assert by_title(figures, "worst p99 latency vs recordcount")["legend"] == ["recordcount", "worst p99"]
    assert by_title(figures, "latency percentile distribution")["x"][:3] == ["50", "90", "99"]
