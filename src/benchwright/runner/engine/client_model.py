"""Which client model a phase runs and how many worker processes it gets: the event loop (many
connections per process, for drivers that lend a channel) or a thread per client."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from benchwright.runner.event_loop import Connection, EventLoop
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.base import ThreadInfo, Workload


def _event_loop_connections(
    workload: Any,
    config: PhaseConfig,
    drivers: list[Any],
    thread_indexes: list[int],
    thread_limits: list[int | None],
    seed: int,
) -> list[Connection] | None:
    """This process's clients as event-loop connections, or None to run a thread each: when the
    phase is paced (threads keep the schedules), ``client.model=threads`` asks for threads, the
    workload has no wire requests for the driver or a driver lends no channel (Redis over TLS)."""
    if not _wants_event_loop(workload, config):
        return None
    connections = []
    for slot, t in enumerate(thread_indexes):
        info = ThreadInfo(
            index=t,
            count=config.threads,
            seed=seed * 7919 + t,
            alone=alone_in_process(config, thread_indexes),
        )
        driver = drivers[slot]
        if driver.event_loop_channel() is None:
            return None
        requests = workload.wire_requests(config.workload_phase, driver, info)
        if requests is None:
            return None
        connection = Connection(_channel_of(driver), driver.drop_channel, requests, thread_limits[slot])
        connection.index = t
        connections.append(connection)
    return connections


def alone_in_process(config: PhaseConfig, thread_indexes: list[int]) -> bool:
    """Whether each client of this worker process is its only one, and unpaced: then it may make its
    requests several blocks at a time (``workloads.base.GROUP``). A paced client keeps one block at a
    time: a longer pause to make requests could push a send past its intended start, and the
    intended-time latency would carry our own delay."""
    return len(thread_indexes) == 1 and not config.target


def _loop_class(driver: Any) -> type[EventLoop]:
    """The loop that speaks the driver's channel: RESP over a socket, libpq's non-blocking API, or
    mysqlclient's split query calls."""
    from benchwright.runner.event_loop_pq import PqChannel, PqEventLoop

    channel = driver.event_loop_channel()
    if isinstance(channel, PqChannel):
        return PqEventLoop
    # imported only when needed: this runs inside the measured window, and importing mysqlclient
    # there would charge its import to a PostgreSQL run's CPU
    from benchwright.runner.event_loop_my import MyChannel, MyEventLoop

    return MyEventLoop if isinstance(channel, MyChannel) else EventLoop


def _wants_event_loop(workload: Any, config: PhaseConfig) -> bool:
    """The phase could run on event loops, if its drivers lend channels."""
    return (
        not config.target
        and config.properties.get("client.model", "auto") != "threads"
        and type(workload).wire_requests is not Workload.wire_requests
    )


def _channel_of(driver: Any) -> Callable[[], Any]:
    def open_channel() -> Any:
        channel = driver.event_loop_channel()
        assert channel is not None, "a driver that lent a channel once lends one again"
        return channel

    return open_channel


PROCESSES_PER_CORE = 2


def default_processes(threads: int, loop: type[EventLoop] | None = None) -> int:
    """Two worker processes per core for threads: threads in one process queue for the GIL, and
    measured here (4 clients, 2 cores) PostgreSQL point selects cost 14 us of client CPU with 4
    processes against 23 us with 2, while Redis GETs cost the same either way
    (benchmarks/bench_ycsb.py --only split).

    Event loops switch nothing and get cheaper the more replies share a wake-up: one process drives
    up to ``loop.CONNECTIONS_PER_PROCESS`` connections before another is added, up to
    ``loop.PROCESSES_PER_CORE`` per core. The RESP loop drives 50, as redis-benchmark's one thread
    drives its 50 clients: Redis answers in microseconds, and YCSB C on Redis with 4 clients cost
    16-18 us of client CPU per GET in one process against 24-25 us in two, at 60-65k against 46-49k
    GET/s (2 cores shared with the server). SQL statements take a server backend tens of
    microseconds, so replies rarely share a wake-up and a single loop only waits longer: the SQL loops
    give each connection its own process, as sysbench gives each its own thread, up to a cap per
    core. Measured the same way: YCSB C on PostgreSQL 36-45k reads/s in two processes against 28-32k
    in one.

    How many per core differs by server (``benchmarks/bench_sql_workloads.py --only processes``; 4
    clients, 2 cores, 3 alternated rounds, 2026-11-25). PostgreSQL's loop goes to two per core: with
    two connections, the scheduler woke our process on another core than its backend's 40-44% of the
    time against 10% with one (perf, sched_wakeup). pgbench, which waits in ppoll where we wait in
    epoll, was woken on the same core 98-100% of the time with one or two connections per process,
    and costs no more with two: the shape is not the cause, our wait is.
    Point selects cost 8.3-9.8 us of client CPU against 9.6-10.0, at 85-96k against 78-83k a second.
    That is the case that matters: the less work the server does per request, the sooner the client
    limits the run. Transactions of several round trips go the other way (tpcb-like 99-120 us
    against 86-94 us, scale 1 and 4), and so do pgbench's with as many threads as we have processes.
    MariaDB's loop stays at one per core: there four processes cost more for oltp_read_write
    (366-439 us against 285-320) and no less for point selects. A process that runs out of core is
    flagged ``client_saturated`` (add ``processes``)."""
    cores = os.cpu_count() or 1
    if loop is not None:
        return max(1, min(-(-threads // loop.CONNECTIONS_PER_PROCESS), loop.PROCESSES_PER_CORE * cores))
    return max(1, min(threads, PROCESSES_PER_CORE * cores))
