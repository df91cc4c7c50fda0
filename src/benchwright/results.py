"""The result document: what one runner phase measured, how it measured it, and whether to trust it.

This is the one schema every workload, every native-tool wrapper, the local store, S3, Timestream and
the reports share. It is versioned (``schema_version``); readers accept older versions through
``ResultDocument.parse`` and writers always write the current one. Secrets never enter it: connection
settings pass through ``redact`` before they are stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.failures import FAILED_SUFFIX as FAILED_SUFFIX
from benchwright.failures import base_operation as base_operation
from benchwright.failures import failed_name as failed_name
from benchwright.failures import is_failed as is_failed
from benchwright.schema_v1 import from_version_1

SCHEMA_VERSION = 2  # 2: failed operations are their own entries (``READ-FAILED``), throughput is successes

Severity = Literal["info", "warning", "invalid"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ValidityFlag(Model):
    """A reason to doubt (``warning``) or reject (``invalid``) a result, or a fact to note (``info``)."""

    code: str  # stable identifier, e.g. client_saturated, error_rate, too_short, throughput_collapse
    severity: Severity
    message: str


class OperationSummary(Model):
    """One operation type (READ, UPDATE, NewOrder, GET ...), or its failed attempts (``READ-FAILED``,
    whose statuses are ERROR and RETRY). Latencies in microseconds, of this entry's operations only: a
    failure's latency never mixes with the successes' percentiles."""

    operations: int
    statuses: dict[str, int]  # Return=OK / NOT_FOUND / USER_ABORT counts; ERROR / RETRY in -FAILED
    throughput: float  # this entry's operations per second (for a -FAILED entry: errors per second)
    average_us: float
    min_us: float
    max_us: float
    stddev_us: float = 0.0
    p50_us: float
    p90_us: float
    p95_us: float
    p99_us: float
    p999_us: float
    histogram: str | None = None  # HdrHistogram compressed base64 (V2 encoding), 1us..1h, 3 digits
    service_time_histogram: str | None = None  # paced runs: the same operations as service time


class IntervalSample(Model):
    """One interval of the time series (default 1 s). ``t`` is seconds since the phase start at the
    interval's end. ``operations``, ``throughput`` and ``p*_us`` are the successful operations;
    ``errors`` counts the failed ones (errors per second = errors / interval)."""

    t: float
    operations: dict[str, int]
    errors: int = 0
    throughput: float
    average_us: dict[str, float] = Field(default_factory=dict)
    p50_us: float = 0.0
    p99_us: float = 0.0
    max_us: float = 0.0


class Measurement(Model):
    """How the numbers were taken: a reader needs this to compare two results honestly."""

    latency: Literal["response_time", "service_time"]
    method: str  # free text, e.g. "wrapper timed with perf_counter_ns around each driver call"
    target_ops_per_sec: float | None = None
    interval_s: float = 1.0
    histogram: str = "HdrHistogram, microseconds, 1 us - 1 h, 3 significant digits"
    processes: int = 1
    threads: int = 1
    source: str = "benchwright"  # or the native tool that produced the numbers (pgbench, ...)


class ClientStats(Model):
    """Resource use of the load generator itself: evidence that it was (not) the bottleneck."""

    cpu_user_s: float = 0.0
    cpu_system_s: float = 0.0
    cpu_us_per_op: float = 0.0
    peak_rss_mb: float = 0.0
    max_process_cpu_share: float = 0.0  # busiest worker process: CPU seconds / wall seconds
    # the same process: seconds its clients were runnable but waited for a core / wall seconds (Linux)
    max_process_cpu_wait_share: float = 0.0
    schedule_lag_p99_ms: float = 0.0  # how late the runner's own timer thread woke up
    saturated: bool = False


class MetricPoint(Model):
    t: float  # seconds since the phase start
    value: float


class MetricSeries(Model):
    """A host or cloud metric aligned with the interval series (CPU, IOPS, BurstBalance ...)."""

    name: str
    unit: str
    source: str  # "proc:host", "proc:server", "cloudwatch:AWS/RDS" ...
    points: list[MetricPoint]


class HostFacts(Model):
    hostname: str = ""
    platform: str = ""
    python: str = ""
    cpus: int = 0
    memory_mb: int = 0
    availability_zone: str | None = None
    availability_zone_id: str | None = None


# the fields whose change makes two results incomparable (``Fingerprint.key``); cpu_count and kernel
# are not among them: the runner's size is in spec_digest (Fargate cpu/memory, EC2 instance type) and
# the same instance type on the same CPU model gives the same count; a kernel update is shown
# (``changes``) but does not cut a series on its own
FINGERPRINT_KEY_FIELDS = (
    "runner_class",
    "runner_platform",
    "instance_type",
    "cpu_model",
    "az_relation",
    "engine_version",
    "target_class",
    "storage",
    "spec_digest",
)
FARGATE_HOST = "fargate, host unknown"  # Fargate publishes no instance type for its hosts


class Fingerprint(Model):
    """What a result was measured on: the runner's machine, the target's class, storage, engine
    version and placement, and a digest of the spec fields that change what is measured. Two results
    are compared only when their ``key`` is the same; ``changes`` says what differs."""

    runner_class: str  # "local" | "measured" (pinned EC2) | "smoke" (Fargate cheap checks)
    runner_platform: str  # "local" | "fargate" | "ec2"
    instance_type: str | None = None  # EC2 instance metadata; FARGATE_HOST on Fargate; None locally
    cpu_model: str = ""
    cpu_count: int = 0
    kernel: str = ""
    runner_az: str | None = None
    runner_az_id: str | None = None
    target_az: str | None = None  # the target's primary (describe calls); None locally
    target_az_id: str | None = None
    engine_version: str | None = None  # as the server reports it (SELECT version(), INFO server)
    target_class: str | None = None  # instance / node class; None locally
    storage: str | None = None  # "gp3 400 GiB 12000 IOPS"; "local disk" locally
    spec_digest: str = ""  # stages/context.spec_digest: the target, workload and runner sections

    @property
    def az_relation(self) -> str:
        """ "same-az", "cross-az" or "unknown": the runner's AZ id against the target primary's (the
        AZ ids, not the names: names are mapped per account)."""
        if self.runner_az_id and self.target_az_id:
            return "same-az" if self.runner_az_id == self.target_az_id else "cross-az"
        if self.runner_az and self.target_az:
            return "same-az" if self.runner_az == self.target_az else "cross-az"
        return "unknown"

    def key(self) -> str:
        """A short stable digest of the fields that define comparability (FINGERPRINT_KEY_FIELDS)."""
        values = {name: getattr(self, name) for name in FINGERPRINT_KEY_FIELDS}
        text = json.dumps(values, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def changes(self, other: Fingerprint) -> list[str]:
        """What differs from ``other`` (the earlier one) to this one, one "field old -> new" line each:
        the key's fields first, then the ones shown but not compared on (cpu_count, kernel, AZs)."""
        shown = (*FINGERPRINT_KEY_FIELDS, "cpu_count", "kernel", "runner_az_id", "target_az_id")
        lines = []
        for name in shown:
            old, new = getattr(other, name), getattr(self, name)
            if old != new:
                lines.append(f"{name} {_shown(old)} -> {_shown(new)}")
        return lines


def _shown(value: Any) -> str:
    return "none" if value is None or value == "" else str(value)


class NetworkFloor(Model):
    """The round-trip floor between runner and target before the measured phase: the engine's
    cheapest command (``SELECT 1``, ``PING``) on one connection, timed by the runner's wrapper."""

    command: str
    round_trips: int  # completed (fewer than asked only when the time bound stopped it)
    p50_us: float
    p99_us: float
    max_us: float


class StatGroup(Model):
    """One source of server counters (``pg_stat_database``, ``commandstats`` ...): both snapshots and
    ``delta`` = after - before for every figure of the after snapshot (for gauges such as
    ``numbackends`` or ``used_memory`` the delta is only the change between the two instants)."""

    before: dict[str, float] = Field(default_factory=dict)
    after: dict[str, float] = Field(default_factory=dict)
    delta: dict[str, float] = Field(default_factory=dict)


class TopStatement(Model):
    """A statement from pg_stat_statements, with its calls and time between the two snapshots."""

    query: str
    calls: int
    total_ms: float
    rows: int


class ServerStats(Model):
    """The server's own counters around a phase (runner/server_stats.py says how they are taken)."""

    engine: str
    source: str  # which views / commands the figures come from
    scope: str = "server-wide counters: anything else using the server at the time is included"
    before_at: datetime
    after_at: datetime
    groups: dict[str, StatGroup] = Field(default_factory=dict)
    top_statements: list[TopStatement] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class FailureWindow(Model):
    """One client's run of failed operations: from its first failure to its next success."""

    client: int  # thread index, or connection index in an event loop
    start_s: float  # the first failed operation ended, seconds since the phase's start instant
    end_s: float | None  # the next successful operation ended (None: the client never recovered)
    errors: int  # failed operations in the run


class WindowFigures(Model):
    """Throughput and latency over a stretch of the phase, from its 1-second intervals."""

    seconds: float
    throughput: float
    p99_us: float  # the median of the intervals' p99 (the intervals keep no mergeable histogram)


class EventOutcome(Model):
    """What one event (failover, reboot ...) did to the measured phase."""

    action: str
    at_s: float  # as the spec asked, seconds after the measured phase started
    issued_at: datetime
    issued_s: float  # when it was really issued, seconds since the phase's start instant
    completed_s: float | None = None  # the action's call returned (local restart done, API accepted)
    unavailable_s: float | None  # first failed operation to the last affected client's next success
    first_failure_s: float | None = None
    recovered_s: float | None = None
    errors: int = 0  # failed operations in that window
    clients_affected: int = 0
    steady_after_s: float | None = None  # issue -> throughput back within 10% of before (2 intervals)
    before: WindowFigures | None = None
    after: WindowFigures | None = None
    detail: str = ""


class Availability(Model):
    method: str
    events: list[EventOutcome] = Field(default_factory=list)


class TimedOperation(Model):
    """An operation benchmark (dump_restore, snapshot_restore ...) run after the measured phase."""

    name: str
    started_at: datetime
    seconds: float | None  # from its start to the target accepting connections and answering a probe
    steps: dict[str, float] = Field(default_factory=dict)  # e.g. dump_s, restore_s, ready_s
    size_bytes: int | None = None  # the dump / snapshot, when known
    ok: bool = True
    detail: str = ""


class ResultDocument(Model):
    schema_version: int = SCHEMA_VERSION
    run_id: str | None = None
    cell: str | None = None  # matrix cell id when the phase belongs to a spec run
    tool: str = "benchwright"
    tool_version: str = ""
    workload: str  # ycsb, tpcc, tpcb, oltp, redis-bench, sql, pgbench ...
    phase: str  # load | warmup | run
    engine: str  # postgres | mysql | redis
    server_version: str | None = None
    endpoints: list[str] = Field(default_factory=list)  # host:port, never credentials
    properties: dict[str, str] = Field(default_factory=dict)
    measurement: Measurement
    started_at: datetime
    ended_at: datetime
    runtime_ms: float
    operations_total: int  # successful operations (every type): a failed operation is never counted
    throughput: float  # successful operations per second (all operation types)
    failed_total: int = 0  # failed operations (ERROR in the -FAILED entries; retried attempts are not)
    operations: dict[str, OperationSummary]
    intervals: list[IntervalSample] = Field(default_factory=list)
    metrics: list[MetricSeries] = Field(default_factory=list)
    client: ClientStats = Field(default_factory=ClientStats)
    host: HostFacts = Field(default_factory=HostFacts)
    validity: list[ValidityFlag] = Field(default_factory=list)
    server_stats: ServerStats | None = None  # the engine's own counters before/after the phase
    failure_windows: list[FailureWindow] = Field(default_factory=list)  # runs of failures per client
    availability: Availability | None = None  # events during the phase (experiments/events.py)
    timed_operations: list[TimedOperation] = Field(default_factory=list)  # spec `operations`
    fingerprint: Fingerprint | None = None  # what it was measured on (absent before schema 2's fields)
    network_floor: NetworkFloor | None = None  # round-trip floor before the measured phase ("run")
    aborted: bool = False  # stopped early (server lost, interrupted): a partial result
    extra: dict[str, Any] = Field(default_factory=dict)  # workload-specific figures (tpmC, buckets ...)

    @property
    def valid(self) -> bool:
        return not any(f.severity == "invalid" for f in self.validity)

    def flag(self, code: str, severity: Severity, message: str) -> None:
        if not any(f.code == code for f in self.validity):
            self.validity.append(ValidityFlag(code=code, severity=severity, message=message))

    def failed(self, operation: str | None = None) -> int:
        """Failed operations (status ERROR) of ``operation`` (its -FAILED entry), or of every type."""
        return self._unsuccessful("ERROR", operation)

    def retried(self, operation: str | None = None) -> int:
        """Attempts re-run after a deadlock or serialization failure (status RETRY: sysbench's
        "ignored errors"): not throughput, not errors either."""
        return self._unsuccessful("RETRY", operation)

    def _unsuccessful(self, status: str, operation: str | None) -> int:
        if operation is not None:
            entry = self.operations.get(failed_name(base_operation(operation)))
            return entry.statuses.get(status, 0) if entry is not None else 0
        return sum(o.statuses.get(status, 0) for name, o in self.operations.items() if is_failed(name))

    def succeeded(self) -> dict[str, OperationSummary]:
        """The entries of successful operations (no -FAILED entry)."""
        return {name: o for name, o in self.operations.items() if not is_failed(name)}

    @property
    def attempted(self) -> int:
        """Every attempt: succeeded, failed and retried."""
        return sum(o.operations for o in self.operations.values())

    @property
    def error_rate(self) -> float:
        """Failed / attempted (0.0 when nothing was tried)."""
        attempted = self.attempted
        return self.failed() / attempted if attempted else 0.0

    def flag_errors(self, nothing_done: str = "no operation completed") -> None:
        """The error-rate flags every producer applies: over 1% failed is invalid, any is a warning;
        a phase in which nothing succeeded is invalid."""
        total = self.attempted
        errors = self.failed()
        if total and errors:
            rate = errors / total
            severity: Severity = "invalid" if rate > 0.01 else "warning"
            self.flag("error_rate", severity, f"{errors:,} of {total:,} operations failed ({rate:.2%})")
        if total == 0:
            self.flag("no_operations", "invalid", nothing_done)

    def all_failed(self) -> str | None:
        """Why this phase measured nothing but failures (every operation an ERROR), or None: a run
        of failed statements must not look like a throughput."""
        total = self.attempted
        errors = self.failed()
        if total and errors >= total:
            return f"every operation failed ({errors:,} of {total:,}, phase {self.phase})"
        return None

    def write(self, path: Path) -> None:
        """Write atomically: a reader never sees half a document."""
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(self.model_dump_json(indent=1))
        tmp.replace(path)

    @classmethod
    def parse(cls, data: str | bytes | dict[str, Any]) -> ResultDocument:
        raw = json.loads(data) if isinstance(data, (str, bytes)) else dict(data)
        version = raw.get("schema_version", 1)
        if version > SCHEMA_VERSION:
            raise ValueError(f"result document schema_version {version} is newer than this Benchwright")
        if version < 2:
            raw = {**from_version_1(raw), "schema_version": SCHEMA_VERSION}
        return cls.model_validate(raw)

    @classmethod
    def read(cls, path: Path) -> ResultDocument:
        return cls.parse(path.read_text())


def as_number(value: Any) -> float | None:
    """A server counter or a matrix parameter as a float, or None when it is not a number (booleans
    are not: ``True`` is a switch, not 1)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def json_schema() -> dict[str, Any]:
    return ResultDocument.model_json_schema()


_SECRET_KEYS = re.compile(r"(pass(word)?|secret|token|webhook|auth|credential)", re.IGNORECASE)
# Linear time on any input (issue 30: an unbounded scheme made one long word quadratic, 24 s for a
# 60 KB spec): a scheme is at most 32 characters, and the parts after it stop at the next '/', '@' or
# space, so each position is tried a bounded number of times.
URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]{0,31}://)(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]*)@", re.I)
# libpq / ODBC key=value strings ("host=h password=pw"), quoted or not, a URL's "?password=pw", and
# "password": "pw" in JSON
_KV_PASSWORD = re.compile(
    r"(?P<key>\b(?:password|passwd|pwd|sslpassword|requirepass|masterauth)\s*=\s*)"
    r"(?P<pw>'(?:[^'\\]|\\.)*'|[^\s;,&]+)",
    re.I,
)
_JSON_PASSWORD = re.compile(r'(?P<key>"(?:password|passwd|pwd)"\s*:\s*)"(?:[^"\\]|\\.)*"', re.I)
# a Slack incoming-webhook URL is its own credential
SLACK_WEBHOOK = re.compile(r"hooks\.slack(?:-gov)?\.com/(?:services|triggers|workflows)/[^\s\"']*", re.I)


def text_secret(text: str) -> str | None:
    """What kind of secret a free text holds (a URL with a password, a ``password=`` pair in a DSN or a
    URL's query, a JSON password, a Slack webhook), or None. Linear time: the patterns above."""
    if URL_PASSWORD.search(text):
        return "a URL with a password"
    if _KV_PASSWORD.search(text) or _JSON_PASSWORD.search(text):
        return "a password=... pair (a DSN or a URL's query)"
    if SLACK_WEBHOOK.search(text):
        return "a Slack webhook URL (a credential of its own)"
    return None


def redact_text(text: str) -> str:
    """The one redaction of free text, used at every boundary (results, store, report, logs, errors):
    passwords in URLs (any scheme, also a mistyped one), in libpq key=value strings and in JSON."""
    text = URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:***@", text)
    text = _KV_PASSWORD.sub(lambda m: f"{m['key']}***", text)
    text = SLACK_WEBHOOK.sub("hooks.slack.com/***", text)
    return _JSON_PASSWORD.sub(lambda m: f'{m["key"]}"***"', text)


def redact(properties: dict[str, str]) -> dict[str, str]:
    """Properties safe to store: secret-looking keys masked, passwords stripped from URLs and DSNs."""
    return {
        k: ("***" if _SECRET_KEYS.search(k) and v else redact_text(str(v))) for k, v in properties.items()
    }
