"""memtier_benchmark wrapper (Redis protocol): command line from our settings, parser for its result
table and progress lines, and the per-command HdrHistogram logs it writes with ``--hdr-file-prefix``.

The parser follows what memtier_benchmark 2.3.0 really prints (tests/data/memtier_2.3.0_*): a table
titled ``ALL STATS`` (or, with ``--run-count`` > 1, ``BEST``/``WORST RUN RESULTS`` and
``AGGREGATED AVERAGE RESULTS (N runs)``), progress lines ``[RUN #1 100%, 2 secs]  0 threads  4 conns:
124922 ops, ...`` and, unless ``--hide-histogram``, a ``Request Latency Distribution`` of cumulative
percentages. memtier_benchmark is not packaged in Debian 12; a missing binary is a ToolMissingError
saying how to build it. Operation names follow redis-bench (SET, GET)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hdrh.histogram import HdrHistogram

from benchwright.errors import RunnerFailed, SpecError
from benchwright.results import ResultDocument
from benchwright.runner.workloads.external.common import (
    LineSink,
    OpFigures,
    Parsed,
    build_document,
    check_exit,
    find_tool,
    histogram_from_counts,
    histogram_from_cumulative,
    run_tool,
    tool_version,
)
from benchwright.runner.workloads.redisbench.buckets import latency_buckets

TOOL = "memtier_benchmark"
NAMES = {"Sets": "SET", "Gets": "GET", "Waits": "WAIT"}
PERCENTILES = "50,90,95,99,99.9"  # what our summary holds; memtier prints only 50,99,99.9 by default
HDR_COMMANDS = ("SET", "GET")  # memtier writes PREFIX_<CMD>_command_run_<N>.hgrm for these
_PROGRESS = re.compile(
    r"\[RUN #(?P<run>\d+) (?P<pct>\d+)%,\s*(?P<secs>\d+) secs\]\s+\d+ threads(?:\s+\d+ conns)?:"
    r"\s+(?P<ops>\d+) ops"
)
_DISTRIBUTION = re.compile(r"^(?P<cmd>[A-Z]+)\s+(?P<ms>\d+(?:\.\d+)?)\s+(?P<pct>\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class MemtierSettings:
    ratio: str = "1:10"  # --ratio SET:GET
    threads: int = 4  # --threads
    clients: int = 50  # --clients (per thread)
    requests: int | None = 10_000  # --requests (per client); None -> --test-time
    test_time_s: int = 10  # --test-time
    data_size: int = 32  # --data-size
    key_maximum: int = 10_000_000  # --key-maximum
    pipeline: int = 1  # --pipeline

    def validate(self) -> None:
        if not re.fullmatch(r"\d+:\d+", self.ratio):
            raise SpecError("memtier.ratio", f"expected SET:GET such as 1:10, got {self.ratio!r}")


def build_argv(
    binary: str,
    settings: MemtierSettings,
    connection: Mapping[str, str],
    hdr_prefix: str | None = None,
) -> tuple[list[str], list[str]]:
    """The command line and the secrets in it. ``hdr_prefix`` asks for per-command HdrHistogram logs."""
    settings.validate()
    argv = [
        binary,
        "--protocol=redis",
        f"--server={connection.get('redis.host', '127.0.0.1')}",
        f"--port={connection.get('redis.port', '6379')}",
        f"--ratio={settings.ratio}",
        f"--threads={settings.threads}",
        f"--clients={settings.clients}",
        f"--data-size={settings.data_size}",
        f"--key-maximum={settings.key_maximum}",
        f"--pipeline={settings.pipeline}",
        "--hide-histogram",
        f"--print-percentiles={PERCENTILES}",
    ]
    if hdr_prefix:
        argv.append(f"--hdr-file-prefix={hdr_prefix}")
    argv.append(
        f"--requests={settings.requests}" if settings.requests else f"--test-time={settings.test_time_s}"
    )
    if connection.get("redis.db", "0") != "0":
        argv.append(f"--select-db={connection['redis.db']}")
    if connection.get("redis.tls", "").lower() in ("1", "true", "yes"):
        argv.append("--tls")
    password = connection.get("redis.password", "")
    if password:
        argv.append(f"--authenticate={password}")
    return argv, [password]


def read_hdr_logs(prefix: str | Path, run: int = 1) -> dict[str, HdrHistogram]:
    """Histograms (microseconds) from the ``.hgrm`` logs memtier wrote for ``--hdr-file-prefix``.

    memtier writes a file only for a command that ran, so a missing file means no such operation.
    The log's histogram uses memtier's own range and precision; it is re-recorded into ours so it
    encodes like every other histogram in a result document."""
    found: dict[str, HdrHistogram] = {}
    for command in HDR_COMMANDS:
        path = Path(f"{prefix}_{command}_command_run_{run}.hgrm")
        if not path.is_file():
            continue
        lines = [ln for ln in path.read_text().splitlines() if ln and ln[0].isdigit()]
        if not lines:
            raise RunnerFailed(f"{TOOL}: {path}: no histogram line in its HdrHistogram log")
        encoded = lines[-1].rsplit(",", 1)[-1]
        try:
            theirs = HdrHistogram.decode(encoded.encode())
        except Exception as exc:  # hdrh raises bare exceptions for corrupt payloads
            raise RunnerFailed(f"{TOOL}: {path}: unreadable histogram ({exc})") from exc
        found[command] = histogram_from_counts(
            [(i.value_iterated_to, i.count_at_value_iterated_to) for i in theirs.get_recorded_iterator()]
        )
    return found


@dataclass
class _Table:
    """One printed result table: rows by type (Sets, Gets, Totals) and its latency distribution."""

    rows: dict[str, dict[str, float | None]] = field(default_factory=dict)
    distribution: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # ms, cumulative %


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None  # "---": memtier's "not applicable"


def _tables(text: str) -> dict[str, _Table]:
    """Every result table by its title. A title is the line above a ``====`` rule."""
    tables: dict[str, _Table] = {}
    current: _Table | None = None
    header: list[str] = []
    previous = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("====") and previous.strip():
            current = tables.setdefault(previous.strip(), _Table())
            header = []
        elif current is not None and line.startswith("Type") and "Ops/sec" in line:
            header = re.split(r"\s{2,}", line.strip())[1:]
        elif current is not None and (m := _DISTRIBUTION.match(line)):
            current.distribution.setdefault(m["cmd"], []).append((float(m["ms"]), float(m["pct"])))
        elif current is not None and header:
            cells = line.split()
            if len(cells) == len(header) + 1 and _float(cells[1]) is not None:
                current.rows[cells[0]] = {h: _float(c) for h, c in zip(header, cells[1:], strict=True)}
        previous = line
    return tables


def _pick(tables: dict[str, _Table]) -> tuple[str, _Table] | None:
    """The one-run table, else the average over runs (best/worst are single runs picked by speed)."""
    for title, table in tables.items():
        if title == "ALL STATS":
            return title, table
    for title, table in tables.items():
        if title.startswith("AGGREGATED AVERAGE RESULTS"):
            return title, table
    return None


def _total_ops(text: str) -> tuple[int, float | None, int]:
    """Operations summed over the runs' final progress lines, the last run's seconds, the run count."""
    final: dict[int, re.Match[str]] = {}
    for m in _PROGRESS.finditer(text):
        if m["pct"] == "100":
            final[int(m["run"])] = m
    if not final:
        return 0, None, 0
    last = final[max(final)]
    return sum(int(m["ops"]) for m in final.values()), float(last["secs"]), len(final)


def parse(output: str, histograms: Mapping[str, HdrHistogram] | None = None) -> Parsed:
    """Figures per command type from the result table; ``histograms`` (from ``read_hdr_logs``) give
    exact per-command counts and full distributions, otherwise counts are the final progress line's
    total split by each type's share of the table's ops/sec."""
    text = output.replace("\r", "\n")
    picked = _pick(_tables(text))
    title, table = picked if picked else ("", _Table())
    rows = table.rows
    total_ops, seconds, runs = _total_ops(text)
    total_rate = (rows.get("Totals") or {}).get("Ops/sec") or 0.0
    operations: dict[str, OpFigures] = {}
    for kind, row in rows.items():
        rate = row.get("Ops/sec") or 0.0
        if kind == "Totals" or not rate:
            continue
        name = NAMES.get(kind, kind.upper())
        hist = (histograms or {}).get(name)
        if hist is not None and hist.get_total_count():
            count = hist.get_total_count()
        else:
            count = round(total_ops * rate / total_rate) if total_rate else 0
            hist = _from_distribution(table.distribution.get(name, []), count)
        percentiles = {}
        for column, value in row.items():
            m = re.fullmatch(r"p([\d.]+) Latency", column)
            if m and value is not None:
                percentiles[float(m[1])] = round(value * 1000, 3)
        avg = row.get("Avg. Latency")
        operations[name] = OpFigures(
            operations=count,
            throughput=rate,
            average_us=round(avg * 1000, 3) if avg is not None else None,
            percentiles_us=percentiles,
            histogram=hist,
        )
    threads = re.search(r"^(\d+)\s+Threads", text, re.M)
    clients = re.search(r"^(\d+)\s+Connections per thread", text, re.M)
    gets = rows.get("Gets") or {}
    return Parsed(
        operations=operations,
        runtime_s=total_ops / total_rate if total_rate and total_ops else seconds,
        extra={
            "get_hits_per_sec": gets.get("Hits/sec"),
            "get_misses_per_sec": gets.get("Misses/sec"),
            "kb_per_sec": (rows.get("Totals") or {}).get("KB/sec"),
            "memtier_table": title,
            "memtier_runs": runs,
        },
        threads=(int(threads[1]) * int(clients[1])) if threads and clients else 1,
    )


def _from_distribution(points: list[tuple[float, float]], count: int) -> HdrHistogram | None:
    """A histogram from the printed ``<= msec / cumulative percent`` lines, scaled to ``count``."""
    if not points or count <= 0:
        return None
    return histogram_from_cumulative([(ms * 1000, round(count * pct / 100)) for ms, pct in points])


def run(
    settings: MemtierSettings,
    connection: Mapping[str, str],
    echo: LineSink | None = None,
    binary: str | None = None,
    run_id: str | None = None,
) -> ResultDocument:
    path = find_tool(TOOL, binary)
    with tempfile.TemporaryDirectory(prefix="benchwright-memtier-") as tmp:
        prefix = str(Path(tmp) / "memtier")
        argv, secrets = build_argv(path, settings, connection, hdr_prefix=prefix)
        result = run_tool(argv, echo=echo)
        check_exit(result, TOOL, secrets)
        histograms = read_hdr_logs(prefix)
    props = {f"memtier.{k}": str(v) for k, v in settings.__dict__.items()}
    doc = build_document(
        tool=TOOL,
        workload="redis-bench",
        engine="redis",
        phase="run",
        parsed=parse(result.output, histograms),
        run=result,
        endpoint=f"{connection.get('redis.host', '127.0.0.1')}:{connection.get('redis.port', '6379')}",
        settings=props,
        secrets=secrets,
        version=tool_version(path),
        run_id=run_id,
    )
    doc.extra["latency_buckets"] = latency_buckets(doc)
    return doc
