"""sysbench wrapper (1.0 syntax): oltp_* tests on MySQL/MariaDB or PostgreSQL from our settings or
passed through; parses ``--report-interval`` lines, the final statistics and the ``--histogram``
table (which we always request, so the document carries a real latency histogram)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from benchwright.errors import SpecError
from benchwright.results import IntervalSample, ResultDocument
from benchwright.runner.workloads.external.common import (
    LineSink,
    OpFigures,
    Parsed,
    build_document,
    check_exit,
    find_tool,
    histogram_from_counts,
    run_tool,
    tool_version,
)

TOOL = "sysbench"
TESTS = (
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
)
OPERATION = "transaction"  # sysbench's "event": one execution of the test's transaction
_INTERVAL = re.compile(
    r"^\[ *(?P<t>[\d.]+)s \] thds: (?P<thds>\d+) tps: (?P<tps>[\d.]+) qps: (?P<qps>[\d.]+) "
    r"\(r/w/o: (?P<r>[\d.]+)/(?P<w>[\d.]+)/(?P<o>[\d.]+)\) lat \(ms,(?P<pct>[\d.]+)%\): (?P<lat>[\d.]+) "
    r"err/s: (?P<err>[\d.]+) reconn/s: (?P<reconn>[\d.]+)",
    re.M,
)


@dataclass(frozen=True)
class SysbenchSettings:
    test: str = "oltp_read_write"
    command: Literal["prepare", "run", "cleanup"] = "run"
    tables: int = 1  # --tables
    table_size: int = 10_000  # --table-size
    threads: int = 1  # --threads
    time_s: int = 10  # --time
    report_interval_s: int = 1  # --report-interval
    percentile: int = 95  # --percentile
    rate: int = 0  # --rate (0 = unlimited)
    options: tuple[tuple[str, str], ...] = ()  # further sysbench options, e.g. (("range_size", "100"),)

    def validate(self) -> None:
        if self.test not in TESTS:
            raise SpecError("sysbench.test", f"{self.test!r} is not one of {', '.join(TESTS)}")
        if self.tables < 1 or self.table_size < 1:
            raise SpecError("sysbench.tables", "tables and table_size must be >= 1")


def connection_args(engine: str, url: str) -> tuple[list[str], dict[str, str], list[str]]:
    """(argv part, environment, secrets) for ``postgres.url`` / ``mysql.url``.

    PostgreSQL's password goes through PGPASSWORD (libpq reads it); sysbench's MySQL driver only
    takes ``--mysql-password``, so there it is on the command line and scrubbed from what we store.
    """
    parts = urlsplit(url.split(",", 1)[0] if engine == "postgres" else url)
    if not parts.hostname:
        raise SpecError(f"{engine}.url", "expected scheme://user:password@host:port/database")
    password = unquote(parts.password or "")
    import os

    password = os.environ.get("BENCHWRIGHT_DB_PASSWORD") or password
    db = parts.path.lstrip("/") or ("postgres" if engine == "postgres" else "")
    if engine == "postgres":
        args = [
            "--db-driver=pgsql",
            f"--pgsql-host={parts.hostname}",
            f"--pgsql-port={parts.port or 5432}",
            f"--pgsql-user={unquote(parts.username or '')}",
            f"--pgsql-db={db}",
        ]
        return args, ({"PGPASSWORD": password} if password else {}), [password]
    if engine == "mysql":
        args = [
            "--db-driver=mysql",
            f"--mysql-host={parts.hostname}",
            f"--mysql-port={parts.port or 3306}",
            f"--mysql-user={unquote(parts.username or '')}",
            f"--mysql-db={db}",
        ]
        if password:
            args.append(f"--mysql-password={password}")
        return args, {}, [password]
    raise SpecError("engine", f"sysbench drives postgres or mysql, not {engine!r}")


def build_argv(
    binary: str, settings: SysbenchSettings, engine: str, url: str
) -> tuple[list[str], dict[str, str], list[str]]:
    settings.validate()
    conn, env, secrets = connection_args(engine, url)
    argv = [
        binary,
        settings.test,
        *conn,
        f"--tables={settings.tables}",
        f"--table-size={settings.table_size}",
    ]
    if settings.command == "run":
        argv += [
            f"--threads={settings.threads}",
            f"--time={settings.time_s}",
            f"--report-interval={settings.report_interval_s}",
            f"--percentile={settings.percentile}",
            f"--rate={settings.rate}",
            "--histogram",
        ]
    argv += [f"--{name}={value}" for name, value in settings.options]
    return [*argv, settings.command], env, secrets


def _num(pattern: str, text: str) -> float | None:
    m = re.search(pattern, text, re.M)
    return float(m[1]) if m else None


def parse(output: str) -> Parsed:
    """Parse a ``run`` output (intervals, statistics, optional histogram) or a ``prepare`` output."""
    if "SQL statistics:" not in output:
        return parse_prepare(output)
    events = int(
        _num(r"^\s+transactions:\s+(\d+)", output) or _num(r"total number of events:\s+(\d+)", output) or 0
    )
    tps = _num(r"^\s+transactions:\s+\d+\s+\(([\d.]+) per sec\.\)", output) or 0.0
    total_time = _num(r"total time:\s+([\d.]+)s", output)
    pct = re.search(r"^\s+(\d+)(?:th|st|nd|rd) percentile:\s+([\d.]+)", output, re.M)
    figures = OpFigures(
        operations=events,
        throughput=tps,
        average_us=_ms(_num(r"^\s+avg:\s+([\d.]+)", output)),
        min_us=_ms(_num(r"^\s+min:\s+([\d.]+)", output)),
        max_us=_ms(_num(r"^\s+max:\s+([\d.]+)", output)),
        errors=0,  # sysbench retries "ignored errors"; they are reported in extra, not lost transactions
    )
    if pct:
        figures.percentiles_us[float(pct[1])] = float(pct[2]) * 1000
    rows = re.findall(r"^\s+([\d.]+) \|\**\s+(\d+)\s*$", output, re.M)
    if rows:
        figures.histogram = histogram_from_counts([(float(v) * 1000, int(c)) for v, c in rows])
    queries = {
        kind: int(_num(rf"^\s+{kind}:\s+(\d+)\s*$", output) or 0)
        for kind in ("read", "write", "other", "total")
    }
    extra: dict[str, object] = {
        "queries": queries,
        "qps": _num(r"^\s+queries:\s+\d+\s+\(([\d.]+) per sec\.\)", output) or 0.0,
        "ignored_errors": int(_num(r"ignored errors:\s+(\d+)", output) or 0),
        "reconnects": int(_num(r"reconnects:\s+(\d+)", output) or 0),
        "tps": tps,
    }
    threads = int(_num(r"^Number of threads: (\d+)", output) or 1)
    return Parsed(
        operations={OPERATION: figures},
        runtime_s=events / tps if tps else total_time,
        intervals=interval_samples(output),
        extra=extra,
        threads=threads,
    )


def name_operation(parsed: Parsed, test: str) -> Parsed:
    """Name the event after the test (oltp_point_select ...), as the native oltp workload does."""
    if OPERATION in parsed.operations:
        parsed.operations = {test: parsed.operations.pop(OPERATION), **parsed.operations}
        for sample in parsed.intervals:
            sample.operations = {test if k == OPERATION else k: v for k, v in sample.operations.items()}
    return parsed


def _ms(value: float | None) -> float | None:
    return value * 1000 if value is not None else None


def interval_samples(output: str) -> list[IntervalSample]:
    """``[ 1s ] thds: 4 tps: 53531.68 qps: ... lat (ms,95%): 0.13 err/s: 0.00 ...`` -> samples."""
    out: list[IntervalSample] = []
    previous = 0.0
    for m in _INTERVAL.finditer(output):
        t = float(m["t"])
        span = t - previous if t > previous else 1.0
        previous = t
        tps = float(m["tps"])
        out.append(
            IntervalSample(
                t=t,
                operations={OPERATION: round(tps * span)},
                errors=round(float(m["err"]) * span),
                throughput=tps,
                # sysbench prints a percentile per interval, not an average: kept as the interval's p99
                # only when it is the 99th; otherwise it stays in the raw output.
                p99_us=float(m["lat"]) * 1000 if m["pct"] in ("99", "99.0") else 0.0,
            )
        )
    return out


def parse_prepare(output: str) -> Parsed:
    rows = sum(int(n) for n in re.findall(r"^Inserting (\d+) records into", output, re.M))
    tables = re.findall(r"^Creating table '([^']+)'", output, re.M)
    return Parsed(
        operations={"INSERT": OpFigures(operations=rows, throughput=0.0)},
        extra={"tables": tables, "rows": rows},
    )


def run(
    settings: SysbenchSettings,
    engine: str,
    url: str,
    echo: LineSink | None = None,
    binary: str | None = None,
    run_id: str | None = None,
) -> ResultDocument:
    path = find_tool(TOOL, binary)
    argv, env, secrets = build_argv(path, settings, engine, url)
    result = run_tool(argv, env=env, echo=echo)
    check_exit(result, TOOL, secrets)
    parsed = name_operation(parse(result.output), settings.test)
    parts = urlsplit(url.split(",", 1)[0])
    props: Mapping[str, str] = {f"sysbench.{k}": str(v) for k, v in settings.__dict__.items()}
    return build_document(
        tool=TOOL,
        workload="oltp",
        engine=engine,
        phase="load" if settings.command == "prepare" else "run",
        parsed=parsed,
        run=result,
        endpoint=f"{parts.hostname}:{parts.port or ''}",
        settings=props,
        secrets=secrets,
        version=tool_version(path),
        run_id=run_id,
    )
