"""The worker process: connects its drivers, waits for the common start instant, runs its clients
(event loop, one thread or several), publishes progress and sends back one ``WorkerReport``."""

from __future__ import annotations

import contextlib
import os
import random
import resource
import signal
import threading
import time
from typing import Any

from benchwright.runner.drivers import new_driver
from benchwright.runner.engine.client_model import _event_loop_connections, _loop_class
from benchwright.runner.engine.config import (
    ERROR_ABORT_S,
    LIVE_PUBLISH_S,
    NS,
    PUBLISH_S,
    PhaseConfig,
    WorkerReport,
)
from benchwright.runner.engine.periods import _SealedIntervals
from benchwright.runner.engine.thread_loop import _thread_loop
from benchwright.runner.measure import LatencyKind, Recorder
from benchwright.runner.workloads.base import ThreadInfo, workload_class


class _Lag:
    """Samples how late a 10 ms sleep wakes up: a busy interpreter (GIL) or a starved CPU shows."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lag-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.samples) < 400_000:
            before = time.perf_counter()
            time.sleep(0.01)
            self.samples.append(max(0.0, (time.perf_counter() - before - 0.01) * 1000))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _worker_main(
    config: PhaseConfig,
    process_index: int,
    thread_indexes: list[int],
    thread_limits: list[int | None],
    ready: Any,
    start_at: Any,
    stop: Any,
    progress: Any,
    reports: Any,
    live: bool = False,
) -> None:
    """Entry point of one worker process. ``live``: also put a ``_PeriodUpdate`` on ``reports``
    whenever intervals are sealed by every thread of the process (before its ``WorkerReport``)."""
    # A forked worker inherits the parent's signal handlers: start from what a fresh interpreter has.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    workload = workload_class(config.workload)(config.properties)
    drivers = []
    try:
        for t in thread_indexes:
            driver = new_driver(config.engine, config.properties, t)
            driver.connect()
            drivers.append(driver)
    except Exception as exc:
        for d in drivers:
            with contextlib.suppress(Exception):
                d.close()
        ready.put((process_index, f"{exc}"))
        return
    ready.put((process_index, None))
    start_ns = start_at.get()
    if start_ns is None:  # the parent gave up (another worker failed to connect)
        for d in drivers:
            d.close()
        return

    latency_kind: LatencyKind = "response_time" if config.target else "service_time"
    interval_ns = int(config.interval_s * NS)
    # One recorder per thread: no shared state on the hot path; folded together after the join.
    recorders = [Recorder(start_ns, latency_kind, interval_ns) for _ in thread_indexes]
    deadline = start_ns + int(config.max_seconds * NS) if config.max_seconds else 1 << 62
    pace_ns = int(NS * config.threads / config.target) if config.target else 0
    # A forked worker inherits the parent's random state: draw a fresh seed from the OS instead.
    seed = config.seed if config.seed is not None else random.SystemRandom().randrange(1 << 30)
    errors: dict[str, int] = {}
    reasons: list[str] = []
    give_up_s = float(config.properties.get("client.give_up_s") or ERROR_ABORT_S)
    windows: dict[int, list[tuple[int, int | None, int]]] = {t: [] for t in thread_indexes}
    stopped_ns = [0] * len(thread_indexes)  # per thread: when it stopped, after the start instant

    def run_thread(slot: int) -> None:
        t = thread_indexes[slot]
        info = ThreadInfo(index=t, count=config.threads, seed=seed * 7919 + t)
        ops = workload.operations(config.phase, drivers[slot], info)
        try:
            reason = _thread_loop(
                ops,
                recorders[slot],
                drivers[slot].recover,
                thread_limits[slot],
                deadline,
                start_ns + (pace_ns * slot // max(1, len(thread_indexes)) if pace_ns else 0),
                pace_ns,
                stop,
                errors,
                give_up_s,
                windows[t],
            )
        finally:
            stopped_ns[slot] = time.perf_counter_ns() - start_ns
            recorders[slot].seal()  # this thread's last interval is final: live progress may use it
        if reason:
            reasons.append(reason)
            stop.set()  # a dead server: stop everyone, keep what was measured

    def total_operations() -> int:
        return sum(r.total_operations() for r in recorders)

    lag = _Lag()
    lag.start()
    cpu0 = os.times()  # the measured window only: imports and connecting are not charged

    sealed = _SealedIntervals(process_index, recorders, stopped_ns)

    def publish() -> None:
        while True:
            finished = done.is_set()  # read first: the last round then sees every thread sealed
            progress[process_index] = total_operations()
            if live:
                update = sealed.collect()
                if update is not None:
                    reports.put(update)
            if finished:
                return
            done.wait(LIVE_PUBLISH_S if live else PUBLISH_S)

    done = threading.Event()
    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    connections = _event_loop_connections(workload, config, drivers, thread_indexes, thread_limits, seed)
    if connections is not None:
        loop = _loop_class(drivers[0])(connections, recorders[0], deadline, stop, errors, give_up_s, windows)
        for unused in recorders[1:]:
            unused.seal()  # the loop records into recorders[0] only: these hold no interval back
        reason = loop.run(start_ns)
        if reason:
            reasons.append(reason)
            stop.set()
    elif len(thread_indexes) == 1:
        run_thread(0)  # one thread per process: run it here, no hand-offs between threads
    else:
        threads = [
            threading.Thread(target=run_thread, args=(i,), name=f"worker-{t}")
            for i, t in enumerate(thread_indexes)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    ended_ns = time.perf_counter_ns() - start_ns
    for slot, finished in enumerate(recorders):  # every client has stopped, however it ran
        finished.seal()
        stopped_ns[slot] = stopped_ns[slot] or ended_ns
    wall = max(1e-9, (time.perf_counter_ns() - start_ns) / NS)  # from the common start instant
    done.set()
    publisher.join()
    recorder = recorders[0]
    for other in recorders[1:]:
        recorder.absorb(other)
    cpu1 = os.times()
    progress[process_index] = recorder.total_operations()
    lag_p99 = lag.stop()
    for d in drivers:
        with contextlib.suppress(Exception):
            d.close()
    reports.put(
        WorkerReport(
            process_index=process_index,
            recorder=recorder.export(),
            cpu_user_s=cpu1.user - cpu0.user,
            cpu_system_s=cpu1.system - cpu0.system,
            wall_s=wall,
            peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            lag_p99_ms=lag_p99,
            error_kinds=errors,
            failure_windows=[
                (t, (a - start_ns) / NS, None if b is None else (b - start_ns) / NS, n)
                for t, runs in windows.items()
                for a, b, n in runs
            ],
            aborted_reason=reasons[0] if reasons else None,
            event_loop=connections is not None,
        )
    )
