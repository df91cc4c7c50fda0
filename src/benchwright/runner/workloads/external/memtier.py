"""memtier_benchmark wrapper (Redis protocol): command line from our settings, parser for its
``ALL STATS`` table and final progress line. memtier_benchmark is not packaged in Debian 12; a missing
binary is a ToolMissingError saying how to build it. Operation names follow redis-bench (SET, GET)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.workloads.external.common import (
    LineSink,
    OpFigures,
    Parsed,
    build_document,
    check_exit,
    find_tool,
    run_tool,
    tool_version,
)
from benchwright.runner.workloads.redisbench.buckets import latency_buckets

TOOL = "memtier_benchmark"
NAMES = {"Sets": "SET", "Gets": "GET", "Waits": "WAIT"}
_FINAL = re.compile(r"\[RUN #\d+ 100%,\s*(?P<secs>\d+) secs\]\s+\d+ threads:\s+(?P<ops>\d+) ops")


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
    binary: str, settings: MemtierSettings, connection: Mapping[str, str]
) -> tuple[list[str], list[str]]:
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
    ]
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


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def parse(output: str) -> Parsed:
    """The ``ALL STATS`` table: one row per command type (Sets, Gets), columns by their header."""
    text = output.replace("\r", "\n")
    section = text.split("ALL STATS", 1)[-1] if "ALL STATS" in text else ""
    header: list[str] = []
    rows: dict[str, dict[str, float | None]] = {}
    for line in section.splitlines():
        if line.startswith("Type"):
            header = re.split(r"\s{2,}", line.strip())[1:]
            continue
        cells = line.split()
        if header and cells and cells[0] in (*NAMES, "Totals") and len(cells) == len(header) + 1:
            rows[cells[0]] = {h: _float(c) for h, c in zip(header, cells[1:], strict=True)}
    final = list(_FINAL.finditer(text))
    total_ops = int(final[-1]["ops"]) if final else 0
    seconds = float(final[-1]["secs"]) if final else None
    total_rate = (rows.get("Totals", {}).get("Ops/sec") or 0.0) if rows else 0.0
    operations: dict[str, OpFigures] = {}
    for kind, name in NAMES.items():
        row = rows.get(kind)
        if not row or not row.get("Ops/sec"):
            continue
        rate = row["Ops/sec"] or 0.0
        share = rate / total_rate if total_rate else 0.0
        percentiles = {}
        for column, value in row.items():
            m = re.fullmatch(r"p([\d.]+) Latency", column)
            if m and value is not None:
                percentiles[float(m[1])] = value * 1000
        avg = row.get("Avg. Latency")
        operations[name] = OpFigures(
            operations=round(total_ops * share),
            throughput=rate,
            average_us=avg * 1000 if avg is not None else None,
            percentiles_us=percentiles,
        )
    threads = re.search(r"^(\d+)\s+Threads", text, re.M)
    clients = re.search(r"^(\d+)\s+Connections per thread", text, re.M)
    hits = (rows.get("Gets") or {}).get("Hits/sec")
    misses = (rows.get("Gets") or {}).get("Misses/sec")
    return Parsed(
        operations=operations,
        runtime_s=total_ops / total_rate if total_rate and total_ops else seconds,
        extra={
            "get_hits_per_sec": hits,
            "get_misses_per_sec": misses,
            "kb_per_sec": (rows.get("Totals") or {}).get("KB/sec"),
        },
        threads=(int(threads[1]) * int(clients[1])) if threads and clients else 1,
    )


def run(
    settings: MemtierSettings,
    connection: Mapping[str, str],
    echo: LineSink | None = None,
    binary: str | None = None,
    run_id: str | None = None,
) -> ResultDocument:
    path = find_tool(TOOL, binary)
    argv, secrets = build_argv(path, settings, connection)
    result = run_tool(argv, echo=echo)
    check_exit(result, TOOL, secrets)
    props = {f"memtier.{k}": str(v) for k, v in settings.__dict__.items()}
    doc = build_document(
        tool=TOOL,
        workload="redis-bench",
        engine="redis",
        phase="run",
        parsed=parse(result.output),
        run=result,
        endpoint=f"{connection.get('redis.host', '127.0.0.1')}:{connection.get('redis.port', '6379')}",
        settings=props,
        secrets=secrets,
        version=tool_version(path),
        run_id=run_id,
    )
    doc.extra["latency_buckets"] = latency_buckets(doc)
    return doc
