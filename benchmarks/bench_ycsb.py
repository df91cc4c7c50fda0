"""YCSB runner vs the reference C tools, side by side on the same local servers (issue #2).

    .venv/bin/python benchmarks/bench_ycsb.py [--seconds 5] [--clients 4]

Runs each pairing as alternated repetitions (``summary.alternated``; BENCH_REPETITIONS, default 5)
and prints, per repetition, throughput and client CPU per operation (ours: the worker processes' CPU
in the measured window, with the whole process tree's from wait4 beside it; the tool's: its whole
process, from wait4), then each repetition's ratios and their median; then the peak RSS of a worker
process as recordcount grows to 10 million (null driver: the runner's own memory, no database).
On a 2-core machine client and server share the cores: read ratios, not absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import scratch
import summary

ROOT = Path(__file__).resolve().parents[1]
BENCHWRIGHT = [sys.executable, "-m", "benchwright.cli"]
PG_PORT, REDIS_PORT = 15432, 16379
# this run's own PostgreSQL database and Redis logical database (scratch.py), set by main()
RUN = {"pg_db": "bench", "redis_db": 9}


def pg_url() -> str:
    return f"postgresql://bench:bench@127.0.0.1:{PG_PORT}/{RUN['pg_db']}"


def redis_props() -> list[str]:
    return [
        "-p",
        f"redis.port={REDIS_PORT}",
        "-p",
        "redis.password=bench",
        "-p",
        f"redis.db={RUN['redis_db']}",
    ]


@dataclass
class Figure:
    name: str
    ops: int
    seconds: float
    cpu_s: float
    rss_mb: float = 0.0
    window_cpu_us_per_op: float = float("nan")  # runner's own figure: worker CPU in the measured window
    model: str = ""  # the client model that ran (event loop or threads)

    @property
    def throughput(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0

    @property
    def cpu_us_per_op(self) -> float:
        return self.cpu_s * 1e6 / self.ops if self.ops else float("nan")


def measured(cmd: list[str], env: dict[str, str] | None = None) -> tuple[str, float]:
    """Run ``cmd``; return its stdout and the user+sys CPU of it and every child it waited for."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )
    out_chunks = []
    assert proc.stdout is not None
    out_chunks.append(proc.stdout.read())
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}): {err.strip()[-400:]}")
    return "".join(out_chunks), usage.ru_utime + usage.ru_stime


def ours(
    label: str,
    engine: str,
    workload: str,
    conn: list[str],
    clients: int,
    seconds: float,
    extra: list[str] | None = None,
) -> Figure:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        _, cpu = measured(
            [
                *BENCHWRIGHT,
                "ycsb",
                "run",
                engine,
                "-P",
                workload,
                *conn,
                "-threads",
                str(clients),
                "-p",
                "operationcount=0",
                "-p",
                f"maxexecutiontime={seconds}",
                *(extra or []),
                "--json",
                str(out),
            ]
        )
        doc = json.loads(out.read_text())
    return Figure(
        label,
        doc["operations_total"],
        doc["runtime_ms"] / 1000,
        cpu,
        doc["client"]["peak_rss_mb"],
        doc["client"]["cpu_us_per_op"],
        summary.client_model(doc["measurement"]["method"]),
    )


def drop_pg_tables(*tables: str) -> None:
    """Start each PostgreSQL load from an empty table: a second run would otherwise hit duplicate keys."""
    import psycopg

    with psycopg.connect(pg_url(), autocommit=True) as conn:
        for table in tables:
            conn.execute(f"DROP TABLE IF EXISTS {table}")


def load(engine: str, conn: list[str], records: int, fields: int) -> None:
    measured(
        [
            *BENCHWRIGHT,
            "ycsb",
            "load",
            engine,
            "-P",
            "workloadc",
            *conn,
            "-threads",
            "4",
            "-p",
            f"recordcount={records}",
            "-p",
            f"fieldcount={fields}",
        ]
    )


def redis_benchmark(clients: int, requests: int, keyspace: int, tests: str = "get") -> Figure:
    """redis-benchmark over ``tests`` (comma-separated), ``requests`` each: the figure sums them."""
    names = tests.split(",")
    cmd = [
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        str(REDIS_PORT),
        "-a",
        "bench",
        "--dbnum",
        str(RUN["redis_db"]),
        "-t",
        tests,
        "-c",
        str(clients),
        "-n",
        str(requests),
        "-r",
        str(keyspace),
        "-d",
        "100",
        "--csv",
    ]
    out, cpu = measured(cmd)
    seconds = sum(requests / float(re.findall(rf'"{n.upper()}","([0-9.]+)"', out)[0]) for n in names)
    return Figure(f"redis-benchmark -t {tests}", requests * len(names), seconds, cpu)


def pgbench(clients: int, seconds: float, scripts: list[str] | None = None) -> Figure:
    """pgbench -M prepared: -S by default, else the given ``-f file@weight`` scripts."""
    out, cpu = measured(
        [
            "pgbench",
            "-h",
            "127.0.0.1",
            "-p",
            str(PG_PORT),
            "-U",
            "bench",
            *(scripts or ["-S"]),
            "-M",
            "prepared",
            "-c",
            str(clients),
            "-j",
            str(clients),
            "-T",
            str(int(seconds)),
            str(RUN["pg_db"]),
        ],
        env={"PGPASSWORD": "bench"},
    )
    txns = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))  # type: ignore[union-attr]
    tps = float(re.search(r"tps = ([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    return Figure("pgbench -M prepared " + (" ".join(scripts) if scripts else "-S"), txns, txns / tps, cpu)


def compare(mine: list[Figure], peers: list[Figure], pair: str) -> None:
    """Alternated repetitions of one pair (``summary.alternated``): each repetition's figures, then
    the medians of the repetitions' ratios. Ours: the workers' CPU in the measured window (start-up
    and imports left out; the whole process's figure is printed beside it)."""
    for i, (ours_fig, peer) in enumerate(zip(mine, peers, strict=True), 1):
        print(
            f"  {i}. {ours_fig.name:<31} {ours_fig.throughput:>10.0f} ops/s  {ours_fig.window_cpu_us_per_op:>7.1f} us"
            f" CPU/op (whole process: {ours_fig.cpu_us_per_op:.1f})  worker RSS {ours_fig.rss_mb:.0f} MB"
        )
        print(f"     {peer.name:<31} {peer.throughput:>10.0f} ops/s  {peer.cpu_us_per_op:>7.1f} us CPU/op")
    tput = [o.throughput / p.throughput for o, p in zip(mine, peers, strict=True)]
    cpu = [o.window_cpu_us_per_op / p.cpu_us_per_op for o, p in zip(mine, peers, strict=True)]
    print(f"  ratio (ours / C tool), each repetition: throughput {summary.describe(tput)}")
    print(f"                                          client CPU per op {summary.describe(cpu)}\n")
    summary.record_pairs(
        pair,
        [(f.throughput, f.window_cpu_us_per_op) for f in mine],
        [(f.throughput, f.cpu_us_per_op) for f in peers],
        mine[0].model,
    )


def split(seconds: float, records: int) -> None:
    """Same Redis GET load, clients spread over 1 process, the default, or one process each."""
    print("Process/thread split, Redis GET (YCSB C, string, uniform): ops/s and client CPU per op")
    conn = [*redis_props(), "-p", "redis.datatype=string", "-p", "fieldcount=1", "-p", "fieldlength=100",
            "-p", f"recordcount={records}", "-p", "requestdistribution=uniform"]  # fmt: skip
    load("redis", conn, records, 1)
    for clients in (1, 2, 4, 8, 16):
        cells = []
        for label, processes in (("1 proc", 1), ("default", None), ("1 per client", clients)):
            extra = ["--processes", str(processes)] if processes else []
            fig = ours(label, "redis", "workloadc", conn, clients, seconds, extra)
            cells.append(f"{label}: {fig.throughput:>7.0f} ops/s {fig.cpu_us_per_op:5.1f} us")
        print(f"  {clients:>2} clients  " + "  |  ".join(cells), flush=True)
    print()


def memory(records: list[int]) -> None:
    print("Worker peak RSS as recordcount grows (null driver, workload A, 200k operations):")
    for distribution in ("zipfian", "latest", "uniform"):
        row = []
        for n in records:
            fig = ours(
                f"n={n}",
                "null",
                "workloada",
                [
                    "-p",
                    f"recordcount={n}",
                    "-p",
                    "operationcount=200000",
                    "-p",
                    f"requestdistribution={distribution}",
                ],
                1,
                60,
                # after the defaults, so they win: 200k operations, not a 60 s timed run
                ["-p", "operationcount=200000", "-p", "maxexecutiontime=0"],
            )
            row.append(f"{n:>10,} -> {fig.rss_mb:5.1f} MB")
            if n == max(records):
                summary.note(f"worker peak RSS, {n:,} records, {distribution}", fig.rss_mb, "MB")
        print(f"  {distribution:<8} " + " | ".join(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="each run of each side")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument(
        "--only",
        choices=("redis", "postgres", "a", "redis-a", "memory", "split"),
        action="append",
        help="run only these sections (repeatable; default: all but split; a: workload A on Redis and "
        "PostgreSQL, redis-a: on Redis only)",
    )
    args = parser.parse_args()
    for tool in ("redis-benchmark", "pgbench"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} missing: run scripts/local-servers install")
    only = set(args.only or ("redis", "postgres", "a", "memory"))
    with scratch.redis_database(REDIS_PORT) as redis_db, scratch.pg_database(PG_PORT) as pg_db:
        RUN.update(redis_db=redis_db, pg_db=pg_db)
        print(f"# this run's own data: Redis database {redis_db}, PostgreSQL database {pg_db}")
        sections(args, only)


def sections(args: argparse.Namespace, only: set[str]) -> None:
    c, s = args.clients, args.seconds
    print(f"# YCSB runner vs C tools: {c} connections each, {s:.0f} s runs, {os.cpu_count()} cores shared\n")

    one_field = [
        "-p",
        "fieldcount=1",
        "-p",
        "fieldlength=100",
        "-p",
        f"recordcount={args.records}",
        "-p",
        "requestdistribution=uniform",
    ]
    redis_one = [*redis_props(), "-p", "redis.datatype=string", *one_field]
    redis_a = "a" in only or "redis-a" in only
    if "redis" in only or redis_a:
        load("redis", redis_one, args.records, 1)
    if "redis" in only:
        print("Redis, YCSB workload C (GET of one 100-byte field) vs redis-benchmark -t get -d 100")
        # redis-benchmark runs a request count: as many as a first run of ours (a warm-up, not
        # counted) made in its seconds
        first = ours("benchwright ycsb C (string)", "redis", "workloadc", redis_one, c, s)
        requests = max(10_000, int(first.ops))
        mine, peers = summary.alternated(
            lambda: ours("benchwright ycsb C (string)", "redis", "workloadc", redis_one, c, s),
            lambda: redis_benchmark(c, requests, args.records),
        )
        compare(mine, peers, "YCSB C vs redis-benchmark GET (Redis)")
    if redis_a:
        print("Redis, YCSB workload A (50% GET, 50% SET XX) vs redis-benchmark -t get,set")
        first = ours("benchwright ycsb A (string)", "redis", "workloada", redis_one, c, s)
        requests = max(10_000, int(first.ops) // 2)
        mine, peers = summary.alternated(
            lambda: ours("benchwright ycsb A (string)", "redis", "workloada", redis_one, c, s),
            lambda: redis_benchmark(c, requests, args.records, "get,set"),
        )
        compare(mine, peers, "YCSB A vs redis-benchmark GET+SET (Redis)")

    pg = ["-p", f"postgres.url={pg_url()}", *one_field]
    if "postgres" in only or "a" in only:
        subprocess.run(
            [
                "pgbench",
                "-i",
                "-q",
                "-s",
                "10",
                "-h",
                "127.0.0.1",
                "-p",
                str(PG_PORT),
                "-U",
                "bench",
                str(RUN["pg_db"]),
            ],
            env={**os.environ, "PGPASSWORD": "bench"},
            check=True,
            capture_output=True,
        )
        drop_pg_tables("usertable")
        load("postgres", pg, args.records, 1)
    if "postgres" in only:
        print("PostgreSQL, YCSB workload C (point select, one field) vs pgbench -S -M prepared (scale 10)")
        mine, peers = summary.alternated(
            lambda: ours("benchwright ycsb C (1 field)", "postgres", "workloadc", pg, c, s),
            lambda: pgbench(c, s),
        )
        compare(mine, peers, "YCSB C vs pgbench -S (PostgreSQL)")
    if "a" in only:
        print("PostgreSQL, YCSB workload A (50% point select, 50% one-row update) vs pgbench, same mix")
        with tempfile.TemporaryDirectory() as tmp:
            select, update = Path(tmp) / "select.sql", Path(tmp) / "update.sql"
            pick = "\\set aid random(1, 100000 * :scale)\n"
            select.write_text(pick + "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
            update.write_text(
                pick + "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n"
            )
            mine, peers = summary.alternated(
                lambda: ours("benchwright ycsb A (1 field)", "postgres", "workloada", pg, c, s),
                lambda: pgbench(c, s, ["-f", f"{select}@50", "-f", f"{update}@50"]),
            )
        compare(mine, peers, "YCSB A vs pgbench select/update 50/50 (PostgreSQL)")

    if "split" in only:
        split(s, args.records)
    if "memory" in only:
        memory([10_000, 1_000_000, 10_000_000])


if __name__ == "__main__":
    main()
