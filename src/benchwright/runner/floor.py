"""The network floor: the round-trip time between runner and target before the measured phase.

200 round trips of the engine's cheapest command (``SELECT 1``, ``PING``) on one connection, each
timed by this wrapper with ``perf_counter_ns`` around the driver call, as the engine times an
operation. A throughput or a p99 read next to this floor tells how much of a latency is the
network and the protocol, and a floor that moved between two nights explains a move that the
database did not make. Bounded: at most ``ROUND_TRIPS`` calls and ``TIMEOUT_S`` seconds, each call
within ``CALL_TIMEOUT_S`` (unless the phase sets its own ``client.op_timeout_s``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from benchwright.results import NetworkFloor, redact_text
from benchwright.runner.plan import PhaseConfig

ROUND_TRIPS = 200
TIMEOUT_S = 10.0  # the whole floor, checked between calls
CALL_TIMEOUT_S = "5"  # each call (client.op_timeout_s: the drivers' own read / statement timeouts)
COMMANDS = {"postgres": "SELECT 1", "mysql": "SELECT 1", "redis": "PING"}
MEASURED_PHASE = "run"  # the phase the floor is taken before


def _call(driver: Any, command: str) -> Callable[[], Any]:
    if command == "PING":
        return lambda: driver.command("PING")
    return lambda: driver.fetchone(command)


def percentile_us(sorted_ns: list[int], percent: float) -> float:
    """Nearest-rank percentile of sorted nanosecond samples, in microseconds."""
    rank = max(1, -(-len(sorted_ns) * percent // 100))  # ceil without floats' rounding
    return round(sorted_ns[int(rank) - 1] / 1000, 1)


def measure_floor(
    engine: str,
    properties: Mapping[str, str],
    round_trips: int = ROUND_TRIPS,
    timeout_s: float = TIMEOUT_S,
) -> NetworkFloor | None:
    """The floor against the target of ``properties``; None for an engine with no such command
    (the null driver). One untimed call first: a connection's first statement pays set-up costs
    (catalogue lookups, a cold plan cache) that are not the network's. Connection errors raise
    (``TargetUnreachable``) as any phase's first connection does."""
    from benchwright.runner.drivers import new_driver

    command = COMMANDS.get(engine)
    if command is None:
        return None
    driver = new_driver(engine, {"client.op_timeout_s": CALL_TIMEOUT_S, **properties}, 0)
    driver.connect()
    samples: list[int] = []
    try:
        call = _call(driver, command)
        call()
        deadline = time.monotonic() + timeout_s
        for _ in range(round_trips):
            t0 = time.perf_counter_ns()
            call()
            samples.append(time.perf_counter_ns() - t0)
            if time.monotonic() > deadline:
                break
    finally:
        driver.close()
    samples.sort()
    return NetworkFloor(
        command=command,
        round_trips=len(samples),
        p50_us=percentile_us(samples, 50),
        p99_us=percentile_us(samples, 99),
        max_us=round(samples[-1] / 1000, 1),
    )


def network_floor(phase: PhaseConfig) -> tuple[NetworkFloor | None, str | None]:
    """The floor before a measured phase ("run"; None for the others), or why there is none: a
    floor that could not be taken is said in the document (``stamp``), never invented."""
    if phase.phase != MEASURED_PHASE:
        return None, None
    try:
        return measure_floor(phase.engine, phase.properties), None
    except Exception as exc:  # the phase's own connection then reports an unreachable target
        return None, redact_text(f"{type(exc).__name__}: {exc}")
