"""Run redis-bench the way redis-benchmark does: each test on its own, all clients together, one
after another, so each test's requests/s covers only its own time. Each test is one engine phase;
the phases are folded into one ResultDocument (operations SET, GET ... side by side)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, ProgressFn, run_phase
from benchwright.runner.workloads.redisbench.workload import parse_tests, per_request
from benchwright.runner.workloads.registry import check_capability

WORKLOAD = "redis-bench"


@dataclass(frozen=True)
class RedisBenchSettings:
    """redis-benchmark's knobs under their own letters."""

    tests: str = "set,get"  # -t
    datasize: int = 3  # -d
    keyspace: int = 0  # -r
    requests: int = 100_000  # -n
    clients: int = 50  # -c
    pipeline: int = 1  # -P
    processes: int | None = None

    def properties(self, test: str) -> dict[str, str]:
        return {
            "redisbench.tests": test,
            "redisbench.datasize": str(self.datasize),
            "redisbench.keyspace": str(self.keyspace),
            "redisbench.requests": str(self.requests),
            "redisbench.pipeline": str(self.pipeline),
        }


def run_redis_bench(
    settings: RedisBenchSettings,
    engine: str,
    connection: Mapping[str, str],
    run_id: str | None = None,
    progress: ProgressFn | None = None,
    live: Callable[[str], ProgressFn | None] | None = None,
) -> ResultDocument:
    """Every test of ``settings`` in turn; raises CapabilityError before connecting to a non-Redis engine.

    ``live``, when given, makes each test's progress callback from the test's name (``set``,
    ``lrange_100``), so a live line can name the test and start its figures afresh; it replaces
    ``progress``."""
    check_capability(WORKLOAD, engine)
    docs = []
    for test in parse_tests(settings.tests):
        if live is not None:
            progress = live(test)
        config = PhaseConfig(
            workload=WORKLOAD,
            phase="run",
            engine=engine,
            properties={**connection, **settings.properties(test)},
            threads=settings.clients,
            processes=settings.processes,
        )
        doc = run_phase(config, progress)
        per_request(doc, settings.pipeline)  # finish() is skipped on an aborted phase
        docs.append(doc)
        if doc.aborted:
            break
    combined = combine(docs, settings.pipeline)
    combined.run_id = run_id
    return combined


def combine(docs: list[ResultDocument], pipeline: int) -> ResultDocument:
    """Fold per-test documents into one: operations side by side, times and counts added."""
    first = docs[0]
    out = first.model_copy(deep=True)
    out.properties = {k: v for k, v in first.properties.items() if k != "redisbench.tests"}
    out.properties["redisbench.tests"] = ",".join(n.lower() for d in docs for n in d.operations)
    offset = first.runtime_ms / 1000
    for doc in docs[1:]:
        out.operations.update(doc.operations)
        for sample in doc.intervals:
            out.intervals.append(sample.model_copy(update={"t": round(sample.t + offset, 3)}))
        offset += doc.runtime_ms / 1000
        out.runtime_ms = round(out.runtime_ms + doc.runtime_ms, 3)
        out.operations_total += doc.operations_total
        out.ended_at = doc.ended_at
        out.aborted = out.aborted or doc.aborted
        for flag in doc.validity:
            out.flag(flag.code, flag.severity, f"{flag.message} [{'/'.join(doc.operations)}]")
        c, d = out.client, doc.client
        c.cpu_user_s = round(c.cpu_user_s + d.cpu_user_s, 3)
        c.cpu_system_s = round(c.cpu_system_s + d.cpu_system_s, 3)
        c.peak_rss_mb = max(c.peak_rss_mb, d.peak_rss_mb)
        c.max_process_cpu_share = max(c.max_process_cpu_share, d.max_process_cpu_share)
        c.schedule_lag_p99_ms = max(c.schedule_lag_p99_ms, d.schedule_lag_p99_ms)
        c.saturated = c.saturated or d.saturated
        for key, value in doc.extra.get("error_kinds", {}).items():
            kinds = out.extra.setdefault("error_kinds", {})
            kinds[key] = kinds.get(key, 0) + value
    out.throughput = out.operations_total / (out.runtime_ms / 1000) if out.runtime_ms else 0.0
    total = out.operations_total
    out.client.cpu_us_per_op = (
        round((out.client.cpu_user_s + out.client.cpu_system_s) * 1e6 / total, 3) if total else 0.0
    )
    out.extra.pop("requests_per_operation", None)
    per_request(out, 1)  # recompute rates and buckets over all tests; counts are per request already
    out.extra["requests_per_operation"] = pipeline
    if "redis_bench" in out.extra:
        out.extra["redis_bench"]["tests"] = list(out.operations)
    out.extra["sequential_tests"] = True
    return out
