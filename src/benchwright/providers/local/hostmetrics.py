"""Host metrics from /proc every second: the local analogue of CloudWatch CPU, IOPS and network.

A background thread samples the machine (CPU user/system/iowait, disk read/write operations and bytes,
network bytes, memory) and the database server's process tree (CPU, I/O, resident memory). ``collect``
stops the sampler and returns rates for the measured window as ``MetricSeries`` whose ``t`` is seconds
since the measured phase's start, so they line up with the result's interval series.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from dataclasses import dataclass, field

import psutil

from benchwright.providers.base import MetricsSource, MetricsWindow, Target
from benchwright.results import MetricPoint, MetricSeries

log = logging.getLogger(__name__)


@dataclass
class Sample:
    wall: float  # epoch seconds
    cpu: dict[str, float]  # cumulative CPU seconds by mode, machine
    disk: tuple[int, int, int, int]  # read ops, write ops, read bytes, write bytes (cumulative)
    net: tuple[int, int]  # bytes received, sent (cumulative)
    mem_used_mb: float
    server_cpu: tuple[float, float] = (0.0, 0.0)  # user, system seconds (cumulative, tree)
    server_io: tuple[int, int, int, int] = (0, 0, 0, 0)  # read/write syscalls, read/write bytes
    server_rss_mb: float = 0.0


@dataclass
class _Tree:
    """Cumulative counters of a process tree; children that exit keep their last values."""

    last: dict[int, tuple[float, float, int, int, int, int, float]] = field(default_factory=dict)

    def read(self, pids: list[int]) -> tuple[tuple[float, float], tuple[int, int, int, int], float]:
        rss = 0.0
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                with p.oneshot():
                    t = p.cpu_times()
                    io = p.io_counters()
                    mem = p.memory_info().rss / 2**20
                self.last[pid] = (
                    t.user,
                    t.system,
                    io.read_count,
                    io.write_count,
                    io.read_bytes,
                    io.write_bytes,
                    mem,
                )
                rss += mem
        vals = list(self.last.values())
        return (
            (sum(v[0] for v in vals), sum(v[1] for v in vals)),
            (
                sum(v[2] for v in vals),
                sum(v[3] for v in vals),
                sum(v[4] for v in vals),
                sum(v[5] for v in vals),
            ),
            rss,
        )


def take_sample(tree: _Tree | None = None, pids: list[int] | None = None) -> Sample:
    cpu = psutil.cpu_times()
    disk = psutil.disk_io_counters()
    net = psutil.net_io_counters()
    sample = Sample(
        wall=time.time(),
        cpu={
            m: getattr(cpu, m, 0.0)
            for m in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
        },
        disk=(disk.read_count, disk.write_count, disk.read_bytes, disk.write_bytes) if disk else (0, 0, 0, 0),
        net=(net.bytes_recv, net.bytes_sent) if net else (0, 0),
        mem_used_mb=(psutil.virtual_memory().total - psutil.virtual_memory().available) / 2**20,
    )
    if tree is not None and pids:
        sample.server_cpu, sample.server_io, sample.server_rss_mb = tree.read(pids)
    return sample


class HostSampler:
    """Samples every ``interval`` seconds in a daemon thread until stopped."""

    def __init__(
        self, pids_of: Target | None = None, interval: float = 1.0, max_samples: int = 86400
    ) -> None:
        self.target = pids_of
        self.interval = interval
        self.max_samples = max_samples
        self.samples: list[Sample] = []
        self.failures = 0
        self._stop = threading.Event()
        self._tree = _Tree()
        self._thread = threading.Thread(target=self._loop, name="benchwright-hostmetrics", daemon=True)

    def _pids(self) -> list[int]:
        fn = getattr(self.target, "server_pids", None)
        return list(fn()) if fn is not None else []

    def start(self) -> None:
        """Take the opening sample here, not in the thread: a ``stop`` that comes before the thread
        first runs still leaves an opening and a closing sample."""
        self._sample()
        self._thread.start()

    def _sample(self) -> None:
        try:
            self.samples.append(take_sample(self._tree, self._pids()))
        except Exception as exc:  # metrics are best effort; the failure is counted and logged once
            self.failures += 1
            if self.failures == 1:
                log.warning("host metrics sample failed: %s: %s", type(exc).__name__, exc)

    def _loop(self) -> None:
        next_at = time.monotonic() + self.interval
        while (
            not self._stop.wait(max(0.0, next_at - time.monotonic())) and len(self.samples) < self.max_samples
        ):
            self._sample()
            next_at += self.interval

    def stop(self) -> None:
        """Stop sampling and take one closing sample, so a window shorter than the interval still
        has a pair of samples to turn into rates."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._sample()


def series_from_samples(samples: list[Sample], window: MetricsWindow, server: bool) -> list[MetricSeries]:
    """Per-second rates between consecutive samples inside the (padded) window."""
    start = window.start.timestamp()
    lo, hi = start - window.pad_s, window.end.timestamp() + window.pad_s
    before = [s for s in samples if s.wall < lo][-1:]
    after = [s for s in samples if s.wall > hi][:1]
    inside = before + [s for s in samples if lo <= s.wall <= hi] + after
    data: dict[tuple[str, str, str], list[MetricPoint]] = {}

    def add(name: str, unit: str, source: str, t: float, value: float) -> None:
        data.setdefault((name, unit, source), []).append(MetricPoint(t=round(t, 3), value=round(value, 3)))

    for a, b in itertools.pairwise(inside):
        dt = b.wall - a.wall
        if dt <= 0:
            continue
        t = b.wall - start
        total = sum(b.cpu.values()) - sum(a.cpu.values())
        if total > 0:
            busy = total - (b.cpu["idle"] - a.cpu["idle"]) - (b.cpu["iowait"] - a.cpu["iowait"])
            add("CPUUtilization", "Percent", "proc:host", t, 100 * busy / total)
            add(
                "CPUUser",
                "Percent",
                "proc:host",
                t,
                100 * (b.cpu["user"] + b.cpu["nice"] - a.cpu["user"] - a.cpu["nice"]) / total,
            )
            add("CPUSystem", "Percent", "proc:host", t, 100 * (b.cpu["system"] - a.cpu["system"]) / total)
            add("CPUIOWait", "Percent", "proc:host", t, 100 * (b.cpu["iowait"] - a.cpu["iowait"]) / total)
        add("ReadIOPS", "Count/Second", "proc:host", t, (b.disk[0] - a.disk[0]) / dt)
        add("WriteIOPS", "Count/Second", "proc:host", t, (b.disk[1] - a.disk[1]) / dt)
        add("ReadThroughput", "Bytes/Second", "proc:host", t, (b.disk[2] - a.disk[2]) / dt)
        add("WriteThroughput", "Bytes/Second", "proc:host", t, (b.disk[3] - a.disk[3]) / dt)
        add("NetworkReceiveThroughput", "Bytes/Second", "proc:host", t, (b.net[0] - a.net[0]) / dt)
        add("NetworkTransmitThroughput", "Bytes/Second", "proc:host", t, (b.net[1] - a.net[1]) / dt)
        add("MemoryUsed", "Megabytes", "proc:host", t, b.mem_used_mb)
        if server and b.server_rss_mb:
            add(
                "CPUUtilization",
                "Percent",
                "proc:server",
                t,
                100 * (sum(b.server_cpu) - sum(a.server_cpu)) / dt,
            )
            add("CPUUser", "Percent", "proc:server", t, 100 * (b.server_cpu[0] - a.server_cpu[0]) / dt)
            add("CPUSystem", "Percent", "proc:server", t, 100 * (b.server_cpu[1] - a.server_cpu[1]) / dt)
            add("ReadOps", "Count/Second", "proc:server", t, (b.server_io[0] - a.server_io[0]) / dt)
            add("WriteOps", "Count/Second", "proc:server", t, (b.server_io[1] - a.server_io[1]) / dt)
            add("ReadThroughput", "Bytes/Second", "proc:server", t, (b.server_io[2] - a.server_io[2]) / dt)
            add("WriteThroughput", "Bytes/Second", "proc:server", t, (b.server_io[3] - a.server_io[3]) / dt)
            add("MemoryRSS", "Megabytes", "proc:server", t, b.server_rss_mb)
    return [MetricSeries(name=n, unit=u, source=s, points=pts) for (n, u, s), pts in data.items()]


class ProcMetricsSource(MetricsSource):
    """``start`` begins sampling for a target; ``collect`` stops it and returns the window's series."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self._samplers: dict[str, HostSampler] = {}

    def _key(self, target: Target) -> str:
        return f"{target.run_id}:{target.handle.get('pid') or target.handle.get('endpoint') or id(target)}"

    def start(self, target: Target) -> None:
        key = self._key(target)
        if key not in self._samplers:
            sampler = HostSampler(target, self.interval)
            sampler.start()
            self._samplers[key] = sampler

    def collect(self, target: Target, window: MetricsWindow) -> list[MetricSeries]:
        sampler = self._samplers.pop(self._key(target), None)
        if sampler is None:
            return []
        sampler.stop()
        return series_from_samples(sampler.samples, window, server=target.kind == "local")

    def stop_all(self) -> None:
        for sampler in self._samplers.values():
            sampler.stop()
        self._samplers.clear()
