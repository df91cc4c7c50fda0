"""pgbench wrapper: ``pgbench -i`` (the load phase) and the built-in scripts or a script file (the run
phase), from our settings or passed through; parses the summary, ``-P`` progress lines, ``-r``
per-statement latencies, ``-i`` step timings and, with ``-l``, the per-transaction log (which gives a
full latency histogram: pgbench itself prints only the average and standard deviation)."""

from __future__ import annotations

import glob
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

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

TOOL = "pgbench"
BUILTINS = {"tpcb-like": "TPC-B (sort of)", "simple-update": "simple update", "select-only": "select only"}
_URL = re.compile(r"^(?P<scheme>postgres(?:ql)?://)(?:(?P<user>[^:@/]*)(?::(?P<pw>[^@/]*))?@)?(?P<rest>.*)$")
_PROGRESS = re.compile(
    r"^progress: (?P<t>[\d.]+) s, (?P<tps>[\d.]+) tps, lat (?P<lat>[\d.]+) ms stddev (?P<sd>[\d.]+|NaN)"
    r"(?:, (?:lag (?P<lag>[\d.]+) ms))?(?:, (?P<failed>\d+) failed)?",
    re.M,
)


@dataclass(frozen=True)
class PgbenchSettings:
    """The settings experiment 5 uses, with pgbench's own names in the comments."""

    mode: Literal["init", "run"] = "run"
    builtin: str = "tpcb-like"  # -b: tpcb-like | simple-update | select-only
    script: str | None = None  # -f FILE instead of a built-in
    scale: int = 1  # -i -s
    fillfactor: int = 100  # -i -F
    clients: int = 1  # -c
    jobs: int = 1  # -j
    time_s: int | None = 10  # -T
    transactions: int | None = None  # -t (instead of -T)
    protocol: str = "simple"  # -M simple | extended | prepared
    progress_s: int = 1  # -P
    rate: float | None = None  # -R (transactions per second)
    transaction_log: bool = True  # -l: per-transaction log -> latency histogram

    def validate(self) -> None:
        if self.builtin not in BUILTINS and not self.script:
            raise SpecError("pgbench.builtin", f"{self.builtin!r} is not one of {', '.join(BUILTINS)}")
        if self.scale < 1:
            raise SpecError("pgbench.scale", f"must be >= 1, got {self.scale}")
        if not 10 <= self.fillfactor <= 100:
            raise SpecError("pgbench.fillfactor", f"must be 10..100, got {self.fillfactor}")
        if self.protocol not in ("simple", "extended", "prepared"):
            raise SpecError("pgbench.protocol", f"{self.protocol!r} is not simple, extended or prepared")


def split_url(url: str) -> tuple[str, str]:
    """(URL without its password, password) -- the password travels in PGPASSWORD, never in argv."""
    m = _URL.match(url.strip())
    if not m:
        raise SpecError("postgres.url", "expected postgresql://user:password@host:port/database")
    user = f"{m['user']}@" if m["user"] else ""
    return f"{m['scheme']}{user}{m['rest']}", m["pw"] or ""


def build_argv(
    binary: str, settings: PgbenchSettings, url: str, log_prefix: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) for our settings; the connection is a libpq URL as dbname."""
    settings.validate()
    conninfo, password = split_url(url)
    env = (
        {"PGPASSWORD": os.environ.get("BENCHWRIGHT_DB_PASSWORD") or password}
        if (password or os.environ.get("BENCHWRIGHT_DB_PASSWORD"))
        else {}
    )
    if settings.mode == "init":
        return [binary, "-i", "-s", str(settings.scale), "-F", str(settings.fillfactor), conninfo], env
    argv = [binary, "-c", str(settings.clients), "-j", str(settings.jobs), "-M", settings.protocol]
    argv += ["-f", settings.script] if settings.script else ["-b", settings.builtin]
    if settings.transactions:
        argv += ["-t", str(settings.transactions)]
    else:
        argv += ["-T", str(settings.time_s or 10)]
    if settings.progress_s:
        argv += ["-P", str(settings.progress_s)]
    if settings.rate:
        argv += ["-R", f"{settings.rate:g}"]
    if log_prefix:
        argv += ["-l", f"--log-prefix={log_prefix}"]
    return [*argv, conninfo], env


def operation_name(transaction_type: str) -> str:
    """``<builtin: select only>`` -> select-only; a script file -> its base name."""
    t = transaction_type.strip()
    for name, title in BUILTINS.items():
        if t == f"<builtin: {title}>":
            return name
    return os.path.basename(t) or "script"


def _value(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text, re.M)
    return m[1] if m else None


def parse(output: str, transaction_log: Sequence[str] = ()) -> Parsed:
    """Parse a run (summary + progress) or an ``-i`` initialisation output."""
    if "transaction type:" not in output:
        return parse_init(output)
    name = operation_name(_value(r"^transaction type: (.+)$", output) or "script")
    processed = _value(r"^number of transactions actually processed: (\d+)", output)
    failed = _value(r"^number of failed transactions: (\d+)", output)
    tps = _value(r"^tps = ([\d.]+) \(without initial connection time\)", output)
    avg = _value(r"^latency average = ([\d.]+) ms", output)
    sd = _value(r"^latency stddev = ([\d.]+) ms", output)
    clients = _value(r"^number of clients: (\d+)", output)
    count = int(processed or 0)
    rate = float(tps or 0.0)
    figures = OpFigures(
        operations=count,
        throughput=rate,
        average_us=float(avg) * 1000 if avg else None,
        stddev_us=float(sd) * 1000 if sd else None,
        errors=int(failed or 0),
    )
    if transaction_log:
        figures.histogram = histogram_from_counts([(v, 1) for v in parse_transaction_log(transaction_log)])
    extra: dict[str, object] = {
        "transaction_type": _value(r"^transaction type: (.+)$", output),
        "scaling_factor": int(_value(r"^scaling factor: (\d+)", output) or 0),
        "query_mode": _value(r"^query mode: (\S+)", output),
        "threads": int(_value(r"^number of threads: (\d+)", output) or 0),
        "initial_connection_ms": float(_value(r"^initial connection time = ([\d.]+) ms", output) or 0.0),
        "tps": rate,
    }
    statements = (
        re.findall(r"^\s+([\d.]+)\s+(\d+)\s+(\S.*)$", output.split("statement latencies", 1)[-1], re.M)
        if "statement latencies" in output
        else []
    )
    if statements:
        extra["statement_latencies_ms"] = [
            {"latency_ms": float(lat), "failures": int(f), "statement": stmt} for lat, f, stmt in statements
        ]
    lag = _value(r"^rate limit schedule lag: avg ([\d.]+) ", output)
    if lag:
        extra["schedule_lag_avg_ms"] = float(lag)
    return Parsed(
        operations={name: figures},
        runtime_s=count / rate if rate else None,
        intervals=progress_intervals(output, name),
        extra=extra,
        threads=int(clients or 1),
    )


def progress_intervals(output: str, name: str) -> list[IntervalSample]:
    """``progress: 60.0 s, 5461.7 tps, lat 172.821 ms stddev 251.666, 0 failed`` -> interval samples."""
    samples: list[IntervalSample] = []
    previous = 0.0
    for m in _PROGRESS.finditer(output):
        t = float(m["t"])
        tps = float(m["tps"])
        span = t - previous if t > previous else 1.0
        previous = t
        samples.append(
            IntervalSample(
                t=t,
                operations={name: round(tps * span)},
                errors=int(m["failed"] or 0),
                throughput=tps,
                average_us={name: float(m["lat"]) * 1000},
            )
        )
    return samples


def parse_init(output: str) -> Parsed:
    """``pgbench -i``: rows generated and the step timings of its ``done in`` line."""
    rows = re.findall(r"^(\d+) of (\d+) tuples \(100%\)", output, re.M)
    total_rows = int(rows[-1][1]) if rows else 0
    done = re.search(r"^done in ([\d.]+) s \((.*)\)\.", output, re.M)
    steps = {k.strip(): float(v) for k, v in re.findall(r"([a-z -]+?) ([\d.]+) s", done[2])} if done else {}
    seconds = float(done[1]) if done else 0.0
    generate = next((v for k, v in steps.items() if "generate" in k), seconds)
    figures = OpFigures(operations=total_rows, throughput=total_rows / generate if generate else 0.0)
    return Parsed(
        operations={"INSERT": figures},
        runtime_s=seconds or None,
        extra={"init_seconds": seconds, "init_steps_s": steps, "accounts_rows": total_rows},
    )


def parse_transaction_log(lines: Sequence[str]) -> list[int]:
    """Latencies (us) of the completed transactions in pgbench ``-l`` log lines
    (``client_id transaction_no time script_no time_epoch time_us [schedule_lag]``)."""
    out: list[int] = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[2].isdigit():
            out.append(int(parts[2]))
    return out


def run(
    settings: PgbenchSettings,
    url: str,
    echo: LineSink | None = None,
    binary: str | None = None,
    run_id: str | None = None,
) -> ResultDocument:
    """Run pgbench with our settings; the document's phase is ``load`` for ``-i``, else ``run``."""
    path = find_tool(TOOL, binary)
    with tempfile.TemporaryDirectory(prefix="bw-pgbench-") as tmp:
        prefix = (
            os.path.join(tmp, "pgbench_log") if settings.mode == "run" and settings.transaction_log else None
        )
        argv, env = build_argv(path, settings, url, prefix)
        result = run_tool(argv, env=env, echo=echo)
        check_exit(result, TOOL, list(env.values()))
        log_lines: list[str] = []
        for name in sorted(glob.glob(f"{prefix}*")) if prefix else []:
            with open(name) as fh:
                log_lines.extend(fh)
    parsed = parse(result.output, log_lines)
    conninfo, _ = split_url(url)
    props = {f"pgbench.{k}": str(v) for k, v in settings.__dict__.items() if v is not None}
    props["postgres.url"] = conninfo
    return build_document(
        tool=TOOL,
        workload="sql" if settings.script else "tpcb",
        engine="postgres",
        phase="load" if settings.mode == "init" else "run",
        parsed=parsed,
        run=result,
        endpoint=_endpoint(conninfo),
        settings=props,
        secrets=list(env.values()),
        version=tool_version(path),
        run_id=run_id,
    )


def _endpoint(conninfo: str) -> str:
    m = _URL.match(conninfo)
    rest = m["rest"] if m else conninfo
    return rest.split("/", 1)[0].split("?", 1)[0] or "localhost"


def parse_files(output: str, log_paths: Mapping[str, str] | None = None) -> Parsed:
    """Convenience for tests and re-parsing stored output: ``log_paths`` values are log file paths."""
    lines: list[str] = []
    for path in (log_paths or {}).values():
        with open(path) as fh:
            lines.extend(fh)
    return parse(output, lines)
