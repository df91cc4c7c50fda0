"""Native SQL workloads side by side with the C tools users trust, on the same server and concurrency.

  pgbench -M prepared -S and tpcb-like      vs  benchwright tpcb        (local PostgreSQL)
  sysbench oltp_point_select / _read_write  vs  benchwright oltp  (PostgreSQL, MariaDB; same --rand-type)
  benchwright tpcc on the event loop        vs  the same on threads (local PostgreSQL; no C peer)
plus the loaders' peak RSS (TPC-C by warehouses, TPC-B by scale), which must not grow with size.

Runs each pair as alternated repetitions (``summary.alternated``; BENCH_REPETITIONS, default 5) and
prints, per repetition: throughput of each, the throughput ratio (ours / tool) and the client CPU per
operation ratio (ours / tool), and each side's CPU split into user and system time per operation (the
kernel's socket work is the same for both; the gap is user time); then the medians of the ratios.
Client CPU = user + sys of every client process (for us the worker processes in the measured window,
from the result document; for the tool, os.wait4's rusage), divided by operations.

    .venv/bin/python benchmarks/bench_sql_workloads.py                   # quick: small sizes
    .venv/bin/python benchmarks/bench_sql_workloads.py --tpcc-warehouses 10 --tpcb-scale 50
    .venv/bin/python benchmarks/bench_sql_workloads.py --only processes --rounds 3  # the SQL loops' default
Needs the local servers (scripts/local-servers start), pgbench and sysbench. Creates and drops its own
databases; never touches other data.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import MySQLdb
import psycopg
import summary

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.oltp.rand import SYSBENCH_1_0_TYPES, RandSpec

PG_ADMIN = "postgresql://bench:bench@127.0.0.1:{port}/bench"
PG_PORT = int(os.environ.get("BENCHWRIGHT_PG_PORT", "15432"))
MY_PORT = int(os.environ.get("BENCHWRIGHT_MYSQL_PORT", "13306"))


@dataclass
class Figure:
    ops: int
    seconds: float
    cpu_s: float
    total_cpu_s: float | None = None  # ours: including process start-up, imports and connecting
    user_s: float = 0.0  # the CPU split: user (the client's own code) and system (the kernel's
    system_s: float = 0.0  # socket work, which a C tool pays as much as we do)

    @property
    def throughput(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0

    @property
    def cpu_us_per_op(self) -> float:
        return self.cpu_s * 1e6 / self.ops if self.ops else float("nan")

    def split(self) -> str:
        """User / system CPU per operation, us."""
        if not self.ops:
            return "-"
        return f"{self.user_s * 1e6 / self.ops:.1f}/{self.system_s * 1e6 / self.ops:.1f}"


def cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def native(config: PhaseConfig, count: Callable[[ResultDocument], int]) -> tuple[Figure, ResultDocument]:
    """Steady-state CPU is the workers' user+sys over the measured window (what the result document
    reports); the total adds the parent and the workers' start-up (spawn, imports, connect)."""
    before = cpu_now()
    doc = run_phase(config)
    total = cpu_now() - before
    user, system = doc.client.cpu_user_s, doc.client.cpu_system_s
    return Figure(count(doc), doc.runtime_ms / 1000, user + system, total, user, system), doc


def tool(
    argv: list[str], parse: Callable[[str], tuple[int, float]], env: dict[str, str] | None = None
) -> Figure:
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}):\n{out}")
    ops, seconds = parse(out)
    return Figure(ops, seconds, usage.ru_utime + usage.ru_stime, None, usage.ru_utime, usage.ru_stime)


def parse_pgbench(out: str) -> tuple[int, float]:
    ops = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))  # type: ignore[union-attr]
    tps = float(re.search(r"tps = ([\d.]+) \(without", out).group(1))  # type: ignore[union-attr]
    return ops, ops / tps


def parse_sysbench(out: str) -> tuple[int, float]:
    ops = int(re.search(r"transactions:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    seconds = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))  # type: ignore[union-attr]
    return ops, seconds


def run_config(
    workload: str, engine: str, props: dict[str, str], args: argparse.Namespace, processes: int | None = None
) -> PhaseConfig:
    """A measured run phase: the script's clients and seconds."""
    return PhaseConfig(
        workload=workload,
        phase="run",
        engine=engine,
        threads=args.clients,
        processes=processes,
        properties=props,
        max_seconds=args.seconds,
    )


def model_of(doc: ResultDocument) -> str:
    return summary.client_model(doc.measurement.method)


def compare(label: str, runs: tuple[list[Figure], list[Figure]], name: str, model: str = "") -> None:
    """Alternated repetitions of one pair (``summary.alternated``): each repetition's figures, then
    the medians of the repetitions' ratios."""
    mine, theirs = runs
    for i, (ours, tool_fig) in enumerate(zip(mine, theirs, strict=True), 1):
        total = (ours.total_cpu_s or 0) * 1e6 / ours.ops if ours.ops else float("nan")
        print(
            f"{label:<28} {i}. benchwright {ours.throughput:>9.1f}/s {ours.cpu_us_per_op:>7.1f} us CPU/op "
            f"({total:.1f} with start-up) | {name} {tool_fig.throughput:>9.1f}/s "
            f"{tool_fig.cpu_us_per_op:>7.1f} us CPU/op | throughput x{ours.throughput / tool_fig.throughput:.2f}"
            f"  CPU/op x{ours.cpu_us_per_op / tool_fig.cpu_us_per_op:.2f}  [{model}]"
            f"  user/sys us/op {ours.split()} vs {tool_fig.split()}",
            flush=True,
        )
    tput, cpu = summary.record_pairs(
        label,
        [(f.throughput, f.cpu_us_per_op) for f in mine],
        [(f.throughput, f.cpu_us_per_op) for f in theirs],
        model,
    )
    print(f"{label:<28} medians of {len(mine)}: throughput x{tput:.2f}  CPU/op x{cpu:.2f}", flush=True)


@contextmanager
def pg_database() -> Iterator[str]:
    name = f"bw_bench_{secrets.token_hex(4)}"
    admin = PG_ADMIN.format(port=PG_PORT)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://bench:bench@127.0.0.1:{PG_PORT}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def mysql_database() -> Iterator[str]:
    name = f"bw_bench_{secrets.token_hex(4)}"
    conn = MySQLdb.connect(host="127.0.0.1", port=MY_PORT, user="bench", password="bench")
    conn.cursor().execute(f"CREATE DATABASE {name}")
    try:
        yield name
    finally:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        conn.close()


def bench_pgbench(args: argparse.Namespace) -> None:
    pgbench = shutil.which("pgbench") or "/usr/lib/postgresql/15/bin/pgbench"
    with pg_database() as url:
        props = {"postgres.url": url, "tpcb.scale": str(args.scale)}
        run_phase(PhaseConfig(workload="tpcb", phase="load", engine="postgres", properties=props, threads=2))
        tool_url = url.replace("bench:bench@", "bench@")
        for script, flags in (("select-only", ["-S"]), ("tpcb-like", [])):
            config = run_config("tpcb", "postgres", {**props, "tpcb.script": script}, args)
            docs: list[ResultDocument] = []

            def ours(
                config: PhaseConfig = config, script: str = script, docs: list[ResultDocument] = docs
            ) -> Figure:
                fig, doc = native(config, lambda d: d.operations[script].statuses.get("OK", 0))
                docs.append(doc)
                return fig

            def theirs(flags: list[str] = flags, docs: list[ResultDocument] = docs) -> Figure:
                return tool(
                    [
                        pgbench,
                        "-n",
                        *flags,
                        # our side prepares every statement (BEGIN and COMMIT too) and sends untyped
                        # text parameters: pgbench's -M prepared does the same; its default (simple)
                        # has the server parse and plan each statement again
                        "-M",
                        "prepared",
                        "-c",
                        str(args.clients),
                        "-j",  # the same shape: as many pgbench threads as our worker processes
                        str(docs[-1].measurement.processes),
                        "-T",
                        str(int(args.seconds)),
                        tool_url,
                    ],
                    parse_pgbench,
                    {"PGPASSWORD": "bench"},
                )

            compare(
                f"tpcb {script} vs pgbench -M prepared (PostgreSQL)",
                summary.alternated(ours, theirs),
                "pgbench",
                model_of(docs[0]),
            )


def bench_sysbench(args: argparse.Namespace) -> None:
    sysbench = shutil.which("sysbench")
    if not sysbench:
        print("sysbench not installed: skipping (apt-get install sysbench)")
        return
    # both sides draw ids from the same distribution, named explicitly (sysbench 1.0's default: special)
    rand = RandSpec.from_properties({"oltp.rand_type": args.rand_type})
    print(f"sysbench pairs: ids drawn as --rand-type={rand.describe()} on both sides")
    for engine in args.sysbench_engines.split(","):
        with mysql_database() if engine == "mysql" else pg_database() as db:
            sysbench_pairs(args, sysbench, rand, engine, db)


def sysbench_pairs(args: argparse.Namespace, sysbench: str, rand: RandSpec, engine: str, db: str) -> None:
    """Both tests on one engine: MariaDB (mysqlclient's split query calls on an event loop) or
    PostgreSQL (the libpq event loop), the tables loaded by benchwright and used by both."""
    if engine == "mysql":
        props = {"mysql.url": f"mysql://bench:bench@127.0.0.1:{MY_PORT}/{db}"}
        connection = [
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            f"--mysql-port={MY_PORT}",
            "--mysql-user=bench",
            "--mysql-password=bench",
            f"--mysql-db={db}",
        ]
        label = "MariaDB"
    else:
        props = {"postgres.url": db}
        connection = [
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            f"--pgsql-port={PG_PORT}",
            "--pgsql-user=bench",
            "--pgsql-password=bench",
            f"--pgsql-db={db.rsplit('/', 1)[-1]}",
        ]
        label = "PostgreSQL"
    props.update({"oltp.tables": "1", "oltp.table_size": str(args.table_size), "oltp.rand_type": rand.type})
    run_phase(PhaseConfig(workload="oltp", phase="load", engine=engine, properties=props, threads=2))
    for test in ("point_select", "read_write"):
        docs: list[ResultDocument] = []

        def ours(test: str = test, docs: list[ResultDocument] = docs) -> Figure:
            fig, doc = native(
                run_config("oltp", engine, {**props, "oltp.test": test}, args),
                lambda d: d.operations[f"oltp_{test}"].statuses.get("OK", 0),
            )
            docs.append(doc)
            return fig

        def theirs(test: str = test) -> Figure:
            return tool(
                [
                    sysbench,
                    f"oltp_{test}",
                    *connection,
                    "--tables=1",
                    f"--table-size={args.table_size}",
                    f"--threads={args.clients}",
                    f"--time={int(args.seconds)}",
                    *rand.sysbench_flags(),
                    "--db-ps-mode=disable" if engine == "mysql" else "--db-ps-mode=auto",
                    "run",
                ],
                parse_sysbench,
            )

        runs = summary.alternated(ours, theirs)
        compare(f"oltp_{test} vs sysbench ({label})", runs, "sysbench", model_of(docs[0]))


def bench_tpcc(args: argparse.Namespace) -> None:
    """TPC-C on the event loop against the same transactions on threads (no C peer here: the
    client models are compared with each other), rounds alternating on one loaded warehouse."""
    with pg_database() as url:
        props = {"postgres.url": url, "tpcc.warehouses": "1"}
        run_phase(PhaseConfig(workload="tpcc", phase="load", engine="postgres", properties=props, threads=2))
        figures: dict[str, list[Figure]] = {"threads": [], "auto": []}
        for _ in range(args.rounds):
            for model in figures:
                ours, doc = native(
                    run_config("tpcc", "postgres", {**props, "client.model": model}, args),
                    lambda d: sum(o.operations for o in d.operations.values()),
                )
                figures[model].append(ours)
                consistent = doc.extra["consistency"]["ok"]
                print(
                    f"tpcc {model_of(doc):<10} {ours.throughput:>8.1f} tx/s {ours.cpu_us_per_op:>8.1f} us CPU/tx"
                    f" consistency {'ok' if consistent else 'VIOLATED'} | load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        loop, threads = figures["auto"], figures["threads"]
        cpu = [a.cpu_us_per_op / b.cpu_us_per_op for a, b in zip(loop, threads, strict=True)]
        tput = [a.throughput / b.throughput for a, b in zip(loop, threads, strict=True)]
        print(
            f"tpcc event loop / threads, {args.clients} clients: CPU per transaction "
            f"{min(cpu):.2f}-{max(cpu):.2f}x, throughput {min(tput):.2f}-{max(tput):.2f}x",
            flush=True,
        )
        summary.note(
            "TPC-C event loop / threads, CPU per transaction", round(sorted(cpu)[len(cpu) // 2], 3), "x"
        )


def bench_processes(args: argparse.Namespace) -> None:
    """Our client alone, one worker process per core against two (a process per connection on 2
    cores, 4 clients), alternated in each round: the figures behind the SQL loops' default
    (``engine.client_model.default_processes``). Not in the default run: it has no C peer."""
    cores = os.cpu_count() or 1
    counts = (cores, 2 * cores)
    with pg_database() as pg, mysql_database() as my:
        oltp = {"oltp.tables": "1", "oltp.table_size": str(args.table_size), "oltp.rand_type": args.rand_type}
        pg_props = {"postgres.url": pg, **oltp}
        my_props = {"mysql.url": f"mysql://bench:bench@127.0.0.1:{MY_PORT}/{my}", **oltp}
        tpcb = {"postgres.url": pg, "tpcb.scale": str(args.scale)}
        for engine, props, workload in (
            ("postgres", pg_props, "oltp"),
            ("mysql", my_props, "oltp"),
            ("postgres", tpcb, "tpcb"),
        ):
            run_phase(
                PhaseConfig(workload=workload, phase="load", engine=engine, properties=props, threads=2)
            )
        cases = [
            (f"oltp_{test}, {label}", engine, "oltp", {**props, "oltp.test": test}, f"oltp_{test}")
            for label, engine, props in (("PostgreSQL", "postgres", pg_props), ("MariaDB", "mysql", my_props))
            for test in ("point_select", "read_write")
        ]
        cases += [
            (f"tpcb {script}", "postgres", "tpcb", {**tpcb, "tpcb.script": script}, script)
            for script in ("select-only", "tpcb-like")
        ]
        for r in range(args.rounds):
            for label, engine, workload, props, op in cases:
                cells = []
                for processes in counts if r % 2 == 0 else counts[::-1]:
                    fig, _ = native(
                        run_config(workload, engine, props, args, processes),
                        lambda d, o=op: d.operations[o].statuses.get("OK", 0),  # type: ignore[misc]
                    )
                    cells.append(
                        f"{processes} processes {fig.throughput:>9.1f}/s {fig.cpu_us_per_op:>7.1f} us CPU/op"
                    )
                print(f"round {r + 1} {label:<30} " + " | ".join(cells), flush=True)


def bench_loader_memory(args: argparse.Namespace) -> None:
    """Peak RSS of the loader's worker processes: streaming keeps it flat as the data grows."""
    for warehouses in sorted({1, args.tpcc_warehouses}):
        with pg_database() as url:
            t0 = time.perf_counter()
            doc = run_phase(
                PhaseConfig(
                    workload="tpcc",
                    phase="load",
                    engine="postgres",
                    threads=2,
                    properties={"postgres.url": url, "tpcc.warehouses": str(warehouses)},
                )
            )
            print(
                f"TPC-C load {warehouses:>3} warehouse(s): peak RSS {doc.client.peak_rss_mb:6.1f} MB per worker, "
                f"{time.perf_counter() - t0:6.1f} s, valid={doc.valid}",
                flush=True,
            )
    for scale in sorted({1, args.tpcb_scale}):
        with pg_database() as url:
            t0 = time.perf_counter()
            doc = run_phase(
                PhaseConfig(
                    workload="tpcb",
                    phase="load",
                    engine="postgres",
                    threads=2,
                    properties={"postgres.url": url, "tpcb.scale": str(scale)},
                )
            )
            print(
                f"TPC-B init scale {scale:>4}: peak RSS {doc.client.peak_rss_mb:6.1f} MB per worker, "
                f"{time.perf_counter() - t0:6.1f} s, valid={doc.valid}",
                flush=True,
            )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=4, help="concurrency for every pair (default 4)")
    p.add_argument("--seconds", type=float, default=5.0, help="duration of each measured run (default 5)")
    p.add_argument("--scale", type=int, default=1, help="pgbench scale for the throughput pairs (default 1)")
    p.add_argument("--table-size", type=int, default=10_000, help="sysbench table size (default 10000)")
    p.add_argument("--tpcc-warehouses", type=int, default=2, help="TPC-C loader RSS size (report: 10)")
    p.add_argument("--tpcb-scale", type=int, default=5, help="TPC-B loader RSS size (report: 50)")
    p.add_argument(
        "--rand-type",
        choices=SYSBENCH_1_0_TYPES,
        default="special",
        help="id distribution for both sysbench and benchwright oltp (default special, sysbench 1.0's)",
    )
    p.add_argument(
        "--sysbench-engines",
        default="postgres,mysql",
        help="engines for the sysbench pairs, comma-separated (default postgres,mysql)",
    )
    p.add_argument("--rounds", type=int, default=2, help="alternating TPC-C rounds per client model")
    p.add_argument(
        "--only",
        choices=("pgbench", "sysbench", "tpcc", "memory", "processes"),
        help="run one part (processes: only when named; our client on 1 and 2 processes per core)",
    )
    args = p.parse_args()
    print(
        f"same server, {args.clients} clients, {args.seconds:g} s per run, {os.cpu_count()} cores on this host"
    )
    if args.only in (None, "pgbench"):
        bench_pgbench(args)
    if args.only in (None, "sysbench"):
        bench_sysbench(args)
    if args.only in (None, "tpcc"):
        bench_tpcc(args)
    if args.only in (None, "memory"):
        bench_loader_memory(args)
    if args.only == "processes":
        bench_processes(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
