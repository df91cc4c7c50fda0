"""`benchwright ycsb load|run ENGINE -P workloada -p key=value -threads N -target OPS -s --json PATH`.

Flags follow YCSB's client: ``-P`` property files (or packaged names), ``-p`` overrides, ``-threads``
and ``-target`` override threadcount and target, ``-s`` prints a status line every 10 s on stderr.
"""

from __future__ import annotations

import argparse
import sys
import time

from benchwright.commands import Subparsers
from benchwright.commands.paths import output_file
from benchwright.errors import SpecError
from benchwright.report.ycsb_text import ycsb_summary
from benchwright.runner.engine import PhaseConfig, ensure_complete, run_phase
from benchwright.runner.fingerprint import stamp
from benchwright.runner.floor import network_floor
from benchwright.runner.plan import DATASET_TARGET, PlanContext
from benchwright.runner.workloads.registry import check_capability
from benchwright.runner.workloads.ycsb.properties import (
    core_settings,
    load_properties,
    unknown_key_warning,
    unknown_keys,
)

ENGINES = ("postgres", "redis", "mysql", "null")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "ycsb",
        help="YCSB core workloads (load or run) against postgres, redis, mysql",
        description="Run a YCSB core workload phase; property files and flags as in YCSB's client.",
        allow_abbrev=False,
    )
    p.add_argument("phase", choices=("load", "run"))
    p.add_argument("engine", choices=ENGINES)
    p.add_argument(
        "-P",
        dest="files",
        action="append",
        default=[],
        metavar="FILE",
        help="property file, or a packaged workload name: workloada .. workloadf",
    )
    p.add_argument(
        "-p",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a property (wins over files); e.g. postgres.url, redis.host, recordcount",
    )
    p.add_argument("-threads", type=int, help="client threads (overrides threadcount)")
    p.add_argument("-target", type=float, help="total operations per second (overrides target)")
    p.add_argument("-s", dest="status", action="store_true", help="status line every status.interval s")
    p.add_argument("--processes", type=int, help="worker processes (default: min(threads, 2 x cores))")
    p.add_argument("--seed", type=int, help="random seed for repeatable key sequences")
    p.add_argument("--json", type=output_file, metavar="PATH", help="write the result document here")
    p.set_defaults(handler=run)


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError("-p", f"expected key=value, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


class StatusPrinter:
    """YCSB-style status lines (every ``every`` s) and, on a terminal, a live progress bar."""

    def __init__(self, enabled: bool, every: float, total: int | None) -> None:
        self.enabled, self.every, self.total = enabled, every, total
        self.next_at = every
        self.bar = None
        if sys.stderr.isatty():
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed} ops"),
                TimeElapsedColumn(),
                transient=True,
            )
            self.task = self.bar.add_task("ycsb", total=total)
            self.bar.start()

    def __call__(self, elapsed: float, ops: int, rate: float) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=ops)
        if self.enabled and elapsed >= self.next_at:
            self.next_at += self.every
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            eta = ""
            if self.total and rate > 0:
                eta = f"; est completion in {max(0.0, (self.total - ops) / rate):.0f} seconds"
            print(
                f"{stamp} {elapsed:.0f} sec: {ops} operations; {rate:.2f} current ops/sec{eta}",
                file=sys.stderr,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run(args: argparse.Namespace) -> int:
    props = load_properties(args.files, parse_overrides(args.overrides))
    if args.threads is not None:
        props["threadcount"] = str(args.threads)
    if args.target is not None:
        props["target"] = str(args.target)
    if args.engine == "redis":  # the user's server: a load never flushes keys Benchwright did not write
        props.setdefault(DATASET_TARGET, "endpoint")
    settings = core_settings(props)  # validates every key before anything connects
    for key in unknown_keys(props):
        print(f"benchwright: warning: {unknown_key_warning(key)}", file=sys.stderr)
    check_capability("ycsb", args.engine)
    total = settings.insertcount if args.phase == "load" else settings.operationcount
    printer = StatusPrinter(args.status, settings.status_interval, total)
    config = PhaseConfig(
        workload="ycsb",
        phase=args.phase,
        engine=args.engine,
        properties=props,
        threads=settings.threadcount,
        processes=args.processes,
        target=settings.target,
        max_seconds=settings.maxexecutiontime,
        seed=args.seed,
    )
    floor, no_floor = network_floor(config)
    try:
        doc = run_phase(config, progress=printer)
    finally:
        printer.close()
    stamp(doc, PlanContext(), floor, no_floor)  # this machine, against the endpoint given
    if args.json:
        doc.write(args.json)
    sys.stdout.write(ycsb_summary(doc))
    ensure_complete(doc)
    return 0
