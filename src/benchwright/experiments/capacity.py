"""Connection and capacity preflight: refuse, before anything is created, a spec the target cannot
hold. Experiment 5 hit "sorry, too many clients already" only after provisioning and loading; a Redis
dataset larger than the node ends in evictions or OOM errors half-way through a load.

- Clients vs ``max_connections``: the busiest phase's clients (threads x runners) plus the runner's
  own short connections (setup probe, server statistics, closing checks) against what the server
  lets an ordinary user open: ``target.settings.max_connections`` when set, else the engine's
  default (a local server's configured maximum; RDS / Aurora: AWS's default formula from the
  instance class's memory) minus the connections reserved for superusers / the provider.
- Dataset vs memory (Redis-protocol targets): an estimate of the loaded data (YCSB records, or
  redis-bench keys) against ``maxmemory`` / the node type's memory less ElastiCache's default 25%
  reserved memory.
- Properties the driver would refuse at load time (``redis.datatype: string`` with ``fieldcount``
  other than 1).
The connection and memory figures are the target's own (its spec model's ``usable_connections`` and
``usable_memory``, from spec/target_capacity.py's tables): an unknown class skips the check rather
than guessing, and someone else's database (an endpoint) is not checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from benchwright.errors import SpecError
from benchwright.spec.properties import enabled_phases, workload_properties
from benchwright.spec.target_capacity import GIB

if TYPE_CHECKING:
    from benchwright.spec import BenchmarkSpec

RUNNER_OWN_CONNECTIONS = 2  # the setup probe / server statistics / closing checks, one at a time + slack
REDIS_KEY_OVERHEAD = 90  # bytes per key beyond its data in a small Redis object (dictEntry, robj, sds)


def _phase_clients(spec: BenchmarkSpec) -> list[tuple[str, int]]:
    out = []
    for name in enabled_phases(spec):
        phase = getattr(spec.workload.phases, name)
        props = workload_properties(spec, name)
        try:
            threads = phase.threads or int(props.get("threadcount") or 1)
        except ValueError:
            continue  # the workload's own checks name a bad threadcount
        out.append((name, threads * spec.runner.count))
    return out


def dataset_bytes(spec: BenchmarkSpec) -> int | None:
    """Bytes the load puts in a Redis-protocol target (an estimate from the workload's descriptor:
    its keys and each key's value bytes, plus Redis's own per-key overhead), None when unknown."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(spec.workload.name)
    if found is None or found.dataset_bytes is None:
        return None
    try:
        keys, per_key = found.dataset_bytes(workload_properties(spec))
    except ValueError:
        return None
    return keys * (per_key + REDIS_KEY_OVERHEAD)


def check_capacity(spec: BenchmarkSpec, q: Callable[[str], str]) -> None:
    """Raise ``SpecError`` naming the field and both numbers when the target cannot hold the spec."""
    target = spec.target
    limit = target.usable_connections()
    if limit is not None:
        usable, source = limit
        for phase, clients in _phase_clients(spec):
            needed = clients + RUNNER_OWN_CONNECTIONS
            if needed > usable:
                field = f"workload.phases.{phase}.threads"
                raise SpecError(
                    q(field),
                    f"{needed} connections ({clients} clients + {RUNNER_OWN_CONNECTIONS} for the runner's "
                    f"own checks) exceed the {usable} the target allows ({source}): lower the threads or "
                    "raise target.settings.max_connections",
                )
    if target.engine != "redis":
        return
    # deferred: the drivers package imports the event loop and its compiled extension
    from benchwright.runner.drivers.redis_datatype import redis_datatype

    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    props = workload_properties(spec)
    own = descriptors().get(spec.workload.name)
    if (
        own is not None
        and own.field_records
        and redis_datatype(props) == "string"  # redis.datatype, or redis.command_group as Tair calls it
        and props.get("fieldcount", "10") != "1"
    ):
        raise SpecError(
            q("workload.properties.fieldcount"),
            f"redis.datatype string stores one value per key, but fieldcount is {props.get('fieldcount', '10')}"
            " (the default is 10): set fieldcount: 1",
        )
    memory = target.usable_memory()
    data = dataset_bytes(spec)
    if memory is not None and data is not None and data > memory[0]:
        field = "workload.properties"
        if own is not None and own.from_data_size is not None and own.size_property:  # sized in records
            field = f"{field}.{own.size_property}"
        raise SpecError(
            q(field),
            f"the dataset needs about {data / GIB:.2f} GiB ({data:,} bytes, estimated) but the node holds "
            f"{memory[0] / GIB:.2f} GiB ({memory[1]}): use a larger node or fewer records",
        )
