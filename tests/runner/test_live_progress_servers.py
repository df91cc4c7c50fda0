"""Live progress lines on a real PostgreSQL: `tpcb run -P 1` prints pgbench's line as the run goes and
`oltp run --report-interval 1` prints sysbench's; the lines add up to the result document, whichever
way the engine runs the clients (a thread each, or one event loop on Redis)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.results import ResultDocument
from benchwright.runner.engine import Period, PeriodProgress, PhaseConfig, run_phase

pytestmark = pytest.mark.servers

PGBENCH_LINE = re.compile(
    r"^progress: (\d+\.0) s, (\d+\.\d) tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, (\d+) failed$", re.M
)
SYSBENCH_LINE = re.compile(
    r"^\[ (\d+)s \] thds: (\d+) tps: (\d+\.\d\d) qps: \d+\.\d\d \(r/w/o: \d+\.\d\d/\d+\.\d\d/\d+\.\d\d\) "
    r"lat \(ms,95%\): \d+\.\d\d err/s: (\d+\.\d\d) reconn/s: 0\.00$",
    re.M,
)


def test_tpcb_prints_pgbench_progress_lines_that_add_up(
    pg_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # given pgbench's tables at scale 1
    assert main(["tpcb", "init", "--url", pg_url, "-s", "1"]) == 0
    capsys.readouterr()
    out = tmp_path / "tpcb.json"

    # when two clients run select-only for 2 s with a progress line every second
    code = main(["tpcb", "run", "--url", pg_url, "-c", "2", "-T", "2", "-P", "1", "-S", "--json", str(out)])
    streams = capsys.readouterr()
    text = streams.err

    # then the progress lines go to stderr as pgbench's do, one per elapsed second, in its layout,
    # and the summary to stdout
    assert code == 0
    lines = PGBENCH_LINE.findall(text)
    assert len(lines) >= 1, text
    assert "progress: " not in streams.out and "transaction type: " in streams.out
    assert [float(t) for t, _, _ in lines] == [float(i) for i in range(1, len(lines) + 1)]
    # and their transactions add up to the document's, second by second up to the last line
    doc = ResultDocument.read(out)
    last = float(lines[-1][0])
    in_lines = sum(round(float(tps)) for _, tps, _ in lines)
    in_doc = sum(sum(s.operations.values()) - s.errors for s in doc.intervals if s.t <= last + 1e-9)
    assert in_lines == in_doc
    assert 0 < in_lines <= doc.extra["transactions"]
    assert sum(int(f) for _, _, f in lines) == 0


def test_oltp_prints_sysbench_interval_lines_that_add_up(
    pg_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    flags = ["--url", pg_url, "--table-size", "300", "--threads", "2"]
    assert main(["oltp", "prepare", "point_select", *flags]) == 0
    capsys.readouterr()
    out = tmp_path / "oltp.json"

    code = main(
        ["oltp", "run", "point_select", *flags, "--time", "2", "--report-interval", "1", "--json", str(out)]
    )
    text = capsys.readouterr().out

    assert code == 0
    lines = SYSBENCH_LINE.findall(text)
    assert len(lines) >= 1, text
    assert text.index("[ 1s ]") < text.index("SQL statistics:")
    assert all(int(thds) == 2 for _, thds, _, _ in lines)
    doc = ResultDocument.read(out)
    last = int(lines[-1][0])
    in_lines = sum(round(float(tps)) for _, _, tps, _ in lines)
    in_doc = sum(sum(s.operations.values()) - s.errors for s in doc.intervals if s.t <= last + 1e-9)
    assert in_lines == in_doc
    assert 0 < in_lines <= doc.extra["transactions"]


@pytest.mark.parametrize("model", ["auto", "threads"], ids=["event-loop-if-it-can", "a-thread-each"])
def test_live_periods_add_up_however_the_clients_run(redis_props: dict[str, str], model: str) -> None:
    # given redis-bench GETs for 2.2 s from 3 clients, timed by the event loop or by threads
    periods: list[Period] = []
    props = {
        **redis_props,
        "client.model": model,
        "redisbench.tests": "get",
        "redisbench.requests": "100000000",
    }
    config = PhaseConfig(
        workload="redis-bench",
        phase="run",
        engine="redis",
        properties=props,
        threads=3,
        processes=1,
        max_seconds=2.2,
    )

    doc = run_phase(config, PeriodProgress(1.0, periods.append))

    # then one period per whole second, the clients all counted running, the operations all there
    assert [p.end_s for p in periods] == [1.0, 2.0]
    assert all(p.threads == 3 for p in periods)
    in_doc = sum(sum(s.operations.values()) for s in doc.intervals if 0 < s.t <= 2.0)
    assert sum(p.totals.operations for p in periods) == in_doc
    assert all(p.totals.operations > 0 and p.totals.stddev_us >= 0 for p in periods)
