"""redis-benchmark wrapper: command line from RedisBenchSettings, parser for its three output forms
(full report with latency distributions, ``--csv``, ``-q``), and a ResultDocument with the same
operation names (SET, GET ...) and latency buckets as the native redis-bench workload."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

from benchwright.results import ResultDocument
from benchwright.runner.workloads.external.common import (
    LineSink,
    OpFigures,
    Parsed,
    build_document,
    check_exit,
    find_tool,
    histogram_from_cumulative,
    run_tool,
    tool_version,
)
from benchwright.runner.workloads.redisbench.buckets import latency_buckets
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings

TOOL = "redis-benchmark"
_BLOCK = re.compile(r"^====== (?P<name>.+?) ======\s*$", re.M)
_QUIET = re.compile(
    r"^(?P<name>[^:\r\n]+): (?P<rps>[\d.]+) requests per second(?:, p50=(?P<p50>[\d.]+) msec)?", re.M
)
_DIST = re.compile(r"^\s*([\d.]+)% <= ([\d.]+) milliseconds \(cumulative count (\d+)\)", re.M)


def operation_name(title: str) -> str:
    """redis-benchmark's test titles -> our operation names ("MSET (10 keys)" -> "MSET")."""
    title = title.strip()
    if title.startswith("LPUSH (needed"):
        return "LPUSH_FOR_LRANGE"
    return title.split(" ", 1)[0].upper()


def build_argv(
    binary: str, settings: RedisBenchSettings, connection: Mapping[str, str], csv_output: bool = False
) -> tuple[list[str], list[str]]:
    """(argv, secrets) for our settings. redis-benchmark has no password variable: it goes in -a."""
    argv = [
        binary,
        "-h",
        connection.get("redis.host", "127.0.0.1"),
        "-p",
        connection.get("redis.port", "6379"),
        "-t",
        settings.tests,
        "-n",
        str(settings.requests),
        "-c",
        str(settings.clients),
        "-d",
        str(settings.datasize),
        "-P",
        str(settings.pipeline),
    ]
    if settings.keyspace:
        argv += ["-r", str(settings.keyspace)]
    if connection.get("redis.db", "0") != "0":
        argv += ["--dbnum", connection["redis.db"]]
    if connection.get("redis.tls", "").lower() in ("1", "true", "yes"):
        argv += ["--tls"]
    password = connection.get("redis.password", "")
    if password:
        argv += ["-a", password]
    if csv_output:
        argv += ["--csv"]
    return argv, [password]


def parse(output: str, requests: int | None = None, clients: int = 1) -> Parsed:
    """Parse any of redis-benchmark's output forms. ``requests`` (-n) fills the count for forms
    that do not print it (``--csv``, ``-q``)."""
    text = output.replace("\r", "\n")
    blocks = list(_BLOCK.finditer(text))
    if blocks:
        return _parse_full(text, blocks)
    if text.lstrip().startswith('"test"') or '\n"test",' in text:
        return _parse_csv(text, requests, clients)
    return _parse_quiet(text, requests, clients)


def _parse_full(text: str, blocks: list[re.Match[str]]) -> Parsed:
    operations: dict[str, OpFigures] = {}
    runtime = 0.0
    threads = 1
    for i, match in enumerate(blocks):
        body = text[match.end() : blocks[i + 1].start() if i + 1 < len(blocks) else len(text)]
        name = operation_name(match["name"])
        done = re.search(r"(\d+) requests completed in ([\d.]+) seconds", body)
        clients = re.search(r"(\d+) parallel clients", body)
        rps = re.search(r"throughput summary: ([\d.]+) requests per second", body)
        lat = re.search(r"avg\s+min\s+p50\s+p95\s+p99\s+max\s*\n\s*([\d.\s]+)", body)
        count = int(done[1]) if done else 0
        seconds = float(done[2]) if done else 0.0  # printed with 2 decimals: use count / rps instead
        if rps and float(rps[1]):
            seconds = count / float(rps[1])
        runtime += seconds
        threads = int(clients[1]) if clients else threads
        points = [(float(ms) * 1000, int(cum)) for _, ms, cum in _DIST.findall(body)]
        figures = OpFigures(
            operations=count,
            throughput=float(rps[1]) if rps else (count / seconds if seconds else 0.0),
            histogram=histogram_from_cumulative(points) if points else None,
        )
        if lat:
            avg, low, p50, p95, p99, high = (float(x) * 1000 for x in lat[1].split()[:6])
            figures.average_us, figures.min_us, figures.max_us = avg, low, high
            figures.percentiles_us = {50.0: p50, 95.0: p95, 99.0: p99}
        operations[name] = figures
    return Parsed(operations=operations, runtime_s=runtime or None, threads=threads)


def _parse_csv(text: str, requests: int | None, clients: int) -> Parsed:
    start = text.index('"test"')
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    operations: dict[str, OpFigures] = {}
    runtime = 0.0
    for row in rows:
        if not row.get("test") or not row.get("rps"):
            continue
        rps = float(row["rps"])
        count = requests or 0
        runtime += count / rps if rps else 0.0
        operations[operation_name(row["test"])] = OpFigures(
            operations=count,
            throughput=rps,
            average_us=float(row["avg_latency_ms"]) * 1000,
            min_us=float(row["min_latency_ms"]) * 1000,
            max_us=float(row["max_latency_ms"]) * 1000,
            percentiles_us={
                50.0: float(row["p50_latency_ms"]) * 1000,
                95.0: float(row["p95_latency_ms"]) * 1000,
                99.0: float(row["p99_latency_ms"]) * 1000,
            },
        )
    return Parsed(operations=operations, runtime_s=runtime or None, threads=clients)


def _parse_quiet(text: str, requests: int | None, clients: int) -> Parsed:
    operations: dict[str, OpFigures] = {}
    runtime = 0.0
    for m in _QUIET.finditer(text):
        if "rps=" in m.group(0):
            continue
        rps = float(m["rps"])
        count = requests or 0
        runtime += count / rps if rps else 0.0
        figures = OpFigures(operations=count, throughput=rps)
        if m["p50"]:
            figures.percentiles_us = {50.0: float(m["p50"]) * 1000}
        operations[operation_name(m["name"])] = figures
    return Parsed(operations=operations, runtime_s=runtime or None, threads=clients)


def to_document(
    parsed: Parsed,
    run: object,
    *,
    endpoint: str,
    settings: Mapping[str, str],
    secrets: Sequence[str],
    version: str | None = None,
    run_id: str | None = None,
) -> ResultDocument:
    from benchwright.runner.workloads.external.common import ToolRun

    assert isinstance(run, ToolRun)
    doc = build_document(
        tool=TOOL,
        workload="redis-bench",
        engine="redis",
        phase="run",
        parsed=parsed,
        run=run,
        endpoint=endpoint,
        settings=settings,
        secrets=secrets,
        version=version,
        run_id=run_id,
    )
    doc.extra["requests_per_second"] = {n: round(o.throughput, 2) for n, o in doc.operations.items()}
    doc.extra["latency_buckets"] = latency_buckets(doc)
    return doc


def _reachable(host: str, port: str, timeout_s: float = 5.0) -> None:
    """redis-benchmark retries a refused connection forever (`-p 1` never returns): try it first."""
    import socket

    from benchwright.errors import TargetUnreachable

    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        raise TargetUnreachable(f"{host}:{port}", f"cannot connect ({exc})") from None


def run(
    settings: RedisBenchSettings,
    connection: Mapping[str, str],
    echo: LineSink | None = None,
    binary: str | None = None,
    run_id: str | None = None,
) -> ResultDocument:
    """Run redis-benchmark with our settings (full report form, so the distribution is kept)."""
    path = find_tool(TOOL, binary)
    argv, secrets = build_argv(path, settings, connection)
    _reachable(connection.get("redis.host", "127.0.0.1"), connection.get("redis.port", "6379"))
    result = run_tool(argv, echo=echo)
    check_exit(result, TOOL, secrets)
    parsed = parse(result.output, settings.requests, settings.clients)
    props = {
        "redisbench.tests": settings.tests,
        "redisbench.datasize": str(settings.datasize),
        "redisbench.keyspace": str(settings.keyspace),
        "redisbench.requests": str(settings.requests),
        "redisbench.clients": str(settings.clients),
        "redisbench.pipeline": str(settings.pipeline),
        **{k: v for k, v in connection.items() if k != "redis.password"},
    }
    endpoint = f"{connection.get('redis.host', '127.0.0.1')}:{connection.get('redis.port', '6379')}"
    return to_document(
        parsed,
        result,
        endpoint=endpoint,
        settings=props,
        secrets=secrets,
        version=tool_version(path),
        run_id=run_id,
    )
