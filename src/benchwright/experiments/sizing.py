"""How much data a load phase writes, so a duration estimate (and the budget made from it) grows
with the data rather than assuming a minute: TPC-C warehouses, pgbench scale, sysbench tables x
rows. Each workload's descriptor (runner/workloads/<name>/descriptor.py) holds its own model, at
deliberately modest bulk-load rates on a mid-size server; a real load may be faster or slower,
which is why this is an estimate the validate table labels as one."""

from __future__ import annotations

from collections.abc import Mapping


def load_seconds(workload: str, props: Mapping[str, str]) -> float | None:
    """Seconds the load phase of ``workload`` should take by its data size; None when its
    descriptor times the load by its record count and rate instead (or no such workload exists)."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(workload)
    if found is None or found.load_seconds is None:
        return None
    return found.load_seconds(props)
