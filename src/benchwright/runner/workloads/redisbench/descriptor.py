"""What the rest of Benchwright asks about redis-benchmark's tests (runner/workloads/descriptor.py)."""

from __future__ import annotations

from benchwright.runner.workloads.descriptor import Props, SeedView, UsageShape, WorkloadDescriptor

WRITES = {"set", "incr", "lpush", "rpush", "sadd", "hset", "zadd", "mset", "lpop", "rpop", "spop"}
BUCKETS = ("throughput", "buckets")  # "buckets": the report's latency-bucket group


def _tests(props: Props) -> list[str]:
    return [t.strip().lower() for t in props.get("redisbench.tests", "set,get").split(",") if t.strip()]


def fixed_requests(props: Props) -> float | None:
    """``-n`` is per test: a phase makes requests x tests, whatever its rate."""
    if not props.get("redisbench.requests"):
        return None
    try:
        requests = float(props["redisbench.requests"]) or 0.0
    except ValueError:
        requests = 0.0
    return requests * max(len(_tests(props)), 1)


def dataset_bytes(props: Props) -> tuple[int, int]:
    """A SET test writes at most one key per request: min(keyspace, requests) keys of -d bytes."""
    keys = min(
        int(props.get("redisbench.keyspace", "0")) or 1, int(props.get("redisbench.requests", "100000"))
    )
    return keys, int(props.get("redisbench.datasize", "3")) + 16


def usage_shape(props: Props, load: Props) -> UsageShape:
    """Its tests (the share that writes) and its value size."""
    tests = _tests(props)
    size = float(props.get("redisbench.datasize", "3") or 3)
    writes = sum(1 for t in tests if t in WRITES) / max(len(tests), 1)
    return UsageShape(1.0 - writes, writes, size, size, size)


DESCRIPTOR = WorkloadDescriptor(
    name="redis-bench",
    load_seconds=None,
    fixed_requests=fixed_requests,
    dataset_bytes=dataset_bytes,
    usage_shape=usage_shape,
    write_operations=frozenset(t.upper() for t in WRITES),
    size_property="redisbench.keyspace",
    from_data_size=None,
    field_records=False,
    native_tools=("redis-benchmark",),
    property_namespace="redisbench.",
    known_properties=frozenset({"tests", "datasize", "keyspace", "requests", "pipeline", "clients"}),
    quick_caps={"requests": 2000, "keyspace": 1000, "datasize": 1000},
    load_share=None,
    run_needs_own_load=lambda props: False,
    report_groups={},
    default_metrics=BUCKETS,
    seed_views=(SeedView("latency buckets (share of requests)", "all", BUCKETS),),
    result_aliases=("redis-benchmark", "memtier"),
)
