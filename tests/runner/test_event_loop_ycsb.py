"""YCSB on the event loops (Redis: RESP over a socket; PostgreSQL: libpq's non-blocking API) against
real servers: the same operations, statuses and data as a thread per connection, replies inspected
(NOT_FOUND), and the loops' faults: a server error mid-pipeline, a dropped connection, a killed
server and a server that does not answer in time."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import psycopg
import pytest
import redis

from benchwright.results import ResultDocument
from benchwright.runner.dataset import MARKER_KEY
from benchwright.runner.engine import PhaseConfig, run_phase
from tests.runner.conftest import Background, kill_group, loop_build, ran_on, wait_for_sessions
from tests.statuses import assert_honest, failures_of, statuses_of

pytestmark = pytest.mark.servers

LOOP = "event loop"
MIX = {
    "recordcount": "200",
    "insertcount": "150",  # the load leaves records 150-199 out: the run's reads of them are NOT_FOUND
    "operationcount": "600",
    "requestdistribution": "uniform",
    "readproportion": "0.3",
    "updateproportion": "0.2",
    "insertproportion": "0.1",
    "scanproportion": "0.2",
    "readmodifywriteproportion": "0.2",
    "maxscanlength": "5",
    "fieldcount": "3",
    "fieldlength": "10",
}


COMPILED = "event loop (libpq hot path in C)"
RESP_COMPILED = "event loop (RESP hot path in C)"


@pytest.fixture(params=["compiled", "python"])
def pq_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each PostgreSQL loop test on both builds of the loop (``loop_build``)."""
    return loop_build(request, monkeypatch, COMPILED)


@pytest.fixture(params=["compiled", "python"])
def resp_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``pq_loop`` for the Redis loop tests."""
    return loop_build(request, monkeypatch, RESP_COMPILED)


def phase(engine: str, props: dict[str, str], name: str, **kw: Any) -> ResultDocument:
    config = PhaseConfig(
        workload="ycsb",
        phase=name,
        engine=engine,
        properties=props,
        seed=11,
        **{"threads": 1, "processes": 1, **kw},
    )
    return run_phase(config)


def statuses(doc: ResultDocument) -> dict[str, dict[str, int]]:
    return {name: s.statuses for name, s in doc.operations.items()}


def wait_for_reads(
    conn: psycopg.Connection[Any], table: str, sessions: int, but: frozenset[int] = frozenset()
) -> set[int]:
    """Until ``sessions`` other sessions (none of ``but``) have read ``table``; their pids (bounded: 60 s)."""
    return wait_for_sessions(conn, f"SELECT % FROM {table} WHERE%", sessions, but)


def redis_dump(props: dict[str, str]) -> dict[bytes, Any]:
    client = redis.Redis(
        host=props["redis.host"],
        port=int(props["redis.port"]),
        password=props.get("redis.password"),
        db=int(props.get("redis.db", "0")),
    )
    out: dict[bytes, Any] = {}
    for key in client.scan_iter(count=1000):
        if key == MARKER_KEY.encode():
            continue  # Benchwright's dataset marker: not a record
        kind = client.type(key)
        if kind == b"hash":
            out[key] = client.hgetall(key)
        elif kind == b"string":
            out[key] = client.get(key)
        elif kind == b"list":
            out[key] = client.lrange(key, 0, -1)
        elif kind == b"set":
            out[key] = client.scard(key)  # an update's SPOP removes a member the server picks at random
        else:
            out[key] = client.zrange(key, 0, -1, withscores=True)
    client.flushdb()
    client.close()
    return out


@pytest.mark.parametrize("datatype", ["hash", "string", "list", "set", "zset"])
def test_redis_loop_does_what_threads_do_for_every_datatype(
    datatype: str, redis_props: dict[str, str], resp_loop: str
) -> None:
    props = {**redis_props, **MIX, "redis.datatype": datatype}
    if datatype == "string":
        props["fieldcount"] = "1"
    if datatype not in ("hash", "string"):
        props["scanproportion"] = "0"
        props["readproportion"] = "0.5"
    outcomes = []
    for model in ("threads", "auto"):
        run_props = {**props, "client.model": model}
        load = phase("redis", run_props, "load")
        run = phase("redis", {**run_props, "insertcount": "200"}, "run")
        assert ran_on(run, resp_loop if model == "auto" else "wrapper")
        assert (LOOP in load.measurement.method) == (model == "auto")
        assert not run.aborted
        errors = run.extra.get("error_kinds")  # LSET of a list never loaded: "no such key", either way
        outcomes.append((statuses(load), statuses(run), errors, redis_dump(redis_props)))
    threads, loop = outcomes
    assert loop == threads
    assert loop[1]["READ"]["NOT_FOUND"] > 0 and loop[1]["READ"]["OK"] > 0
    assert sum(sum(s.values()) for s in loop[1].values()) == 600


def test_postgres_loop_does_what_threads_do(pg_url: str, pq_loop: str) -> None:
    props = {"postgres.url": pg_url, **MIX, "table": "loopmix"}
    outcomes = []
    for model in ("threads", "auto"):
        run_props = {**props, "client.model": model}
        load = phase("postgres", run_props, "load")
        run = phase("postgres", {**run_props, "insertcount": "200"}, "run")
        assert ran_on(run, pq_loop if model == "auto" else "wrapper")
        assert not run.aborted and "error_kinds" not in run.extra
        with psycopg.connect(pg_url, autocommit=True) as conn:
            rows = conn.execute("SELECT * FROM loopmix ORDER BY 1").fetchall()
            conn.execute("DROP TABLE loopmix")
        outcomes.append((statuses(load), statuses(run), rows))
    threads, loop = outcomes
    assert loop == threads
    assert loop[1]["READ"]["NOT_FOUND"] > 0 and loop[1]["READ"]["OK"] > 0
    assert loop[1]["UPDATE"].get("NOT_FOUND", 0) > 0  # an UPDATE of a record never loaded


def test_redis_requests_larger_than_the_send_buffer_are_written_in_parts(
    redis_props: dict[str, str], resp_loop: str
) -> None:
    """SETs of twice the kernel's largest TCP send buffer (``tcp_wmem``'s maximum): no socket takes
    one in a single send, so the loop must wait for it to drain and write the rest (the FLUSH state),
    and the server must get every byte. (YCSB records stop at 64 KB, so the libpq loop's FLUSH has no
    workload that reaches it for certain.)"""
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        size = 2 * int(f.read().split()[2])
    props = {
        **redis_props,
        "redisbench.tests": "set",
        "redisbench.requests": "3",
        "redisbench.datasize": str(size),
    }
    doc = run_phase(PhaseConfig("redis-bench", "run", "redis", props, threads=1, processes=1))
    assert ran_on(doc, resp_loop)
    assert doc.operations["SET"].statuses == {"OK": 3}
    assert [len(value) for value in redis_dump(redis_props).values()] == [size]


def test_redis_server_error_mid_pipeline_fails_that_request_only(
    redis_props: dict[str, str], resp_loop: str
) -> None:
    """An insert is HSET + ZADD on the key index: with the index key holding a string the ZADD,
    second in the pipeline, fails; every insert is one ERROR and the reads after it stay aligned."""
    props = {**redis_props, **MIX, "insertproportion": "0.5", "readproportion": "0.5"}
    props.update(updateproportion="0", scanproportion="0", readmodifywriteproportion="0")
    phase("redis", props, "load")
    client = redis.Redis(
        host="127.0.0.1",
        port=int(props["redis.port"]),
        password=props["redis.password"],
        db=int(props["redis.db"]),
    )
    client.delete("usertable:index")
    client.set("usertable:index", "not a sorted set")
    run = phase("redis", props, "run", threads=4)
    assert ran_on(run, resp_loop)
    assert "INSERT" not in run.operations  # every insert failed: no throughput entry for it
    inserts, reads = run.operations["INSERT-FAILED"], run.operations["READ"]
    assert inserts.statuses == {"ERROR": inserts.operations} and inserts.operations > 0
    assert run.extra["error_kinds"] == {"INSERT:ResponseError": inserts.operations}
    assert failures_of(run.operations, "READ") == 0 and reads.statuses["OK"] > 0
    assert run.operations_total == reads.operations and run.failed_total == inserts.operations
    assert_honest(run)
    client.flushdb()
    client.close()


def test_postgres_server_error_fails_that_request_and_the_connection_goes_on(
    pg_url: str, pq_loop: str
) -> None:
    """Run-phase inserts of records that exist (insertstart makes them collide): each is one
    UniqueViolation; the reads in between succeed on the same connections."""
    props = {"postgres.url": pg_url, **MIX, "table": "loopdup", "insertproportion": "0.5"}
    props.update(
        readproportion="0.5", updateproportion="0", scanproportion="0", readmodifywriteproportion="0"
    )
    props.update(insertorder="ordered", insertcount="200")
    phase("postgres", props, "load")
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the records the run will insert, already there
        conn.execute(
            "INSERT INTO loopdup (ycsb_key) SELECT 'user' || g FROM generate_series(0, 100000) g"
            " ON CONFLICT DO NOTHING"
        )
    run = phase("postgres", props, "run", threads=3)
    assert ran_on(run, pq_loop)
    inserts = failures_of(run.operations, "INSERT")
    assert inserts > 0
    assert run.extra["error_kinds"] == {"INSERT:UniqueViolation": inserts}
    assert failures_of(run.operations, "READ") == 0 and run.operations["READ"].statuses["OK"] > 0
    assert run.failed_total == inserts
    assert_honest(run)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE loopdup")


def test_postgres_reply_overdue_is_a_timeout_and_the_connection_is_reopened(
    pg_url: str, pq_loop: str
) -> None:
    """A lock held elsewhere makes every UPDATE wait: past postgres.timeout the request fails as a
    TimeoutError and the connection is replaced; the run ends by itself (every operation failing)."""
    props = {"postgres.url": pg_url, **MIX, "table": "loopslow", "postgres.timeout": "0.3"}
    props.update(readproportion="0", updateproportion="1", insertproportion="0", scanproportion="0")
    props.update(readmodifywriteproportion="0", operationcount="40", insertcount="200")
    phase("postgres", props, "load")
    with psycopg.connect(pg_url) as blocker:
        blocker.execute("SELECT * FROM loopslow FOR UPDATE")  # row locks: count(*) still answers
        run = phase("postgres", props, "run", threads=2)
        blocker.rollback()
    assert ran_on(run, pq_loop)
    assert run.extra["error_kinds"]["UPDATE:TimeoutError"] >= 2
    assert "UPDATE" not in run.operations  # no update succeeded: nothing counts as throughput
    assert failures_of(run.operations, "UPDATE") == sum(run.extra["error_kinds"].values())
    assert run.operations["UPDATE-FAILED"].max_us >= 300_000  # the wait, in the failures' latencies
    assert run.operations_total == 0 and run.throughput == 0
    assert_honest(run)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE loopslow")


def wait_for_updates(conn: psycopg.Connection[Any], table: str, rows: int) -> None:
    """Until the server counts ``rows`` rows of ``table`` updated (its statistics, flushed by each
    session about once a second; bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        row = conn.execute(
            "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = %s", (table,)
        ).fetchone()
        if row is not None and row[0] >= rows:
            return
        time.sleep(0.02)  # polling the server's view: a readiness probe
    raise AssertionError(f"no {rows} rows of {table} updated within 60 s")


def wait_for_stuck_updates(conn: psycopg.Connection[Any], table: str, sessions: int) -> set[int]:
    """Until ``sessions`` sessions, counted over time, have waited on a lock in an UPDATE of ``table``;
    their pids (bounded: 60 s). A session the client gave up on waits on (the server does not notice
    that its client left while it waits on a lock): it still counts if it has gone."""
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        seen |= {
            pid
            for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE %s",
                (f"UPDATE {table} SET %",),
            ).fetchall()
        }
        if len(seen) >= sessions:
            return seen
        time.sleep(0.02)  # polling the server's view: a readiness probe
    raise AssertionError(f"no {sessions} sessions stuck updating {table} within 60 s (saw {sorted(seen)})")


def test_postgres_reply_overdue_mid_run_is_a_timeout_and_the_run_goes_on(pg_url: str, pq_loop: str) -> None:
    """The same lock, taken once the run is under way: the UPDATEs it stalls are on sessions that
    have prepared their statement, which the compiled part (where there is one) drives, so theirs is
    the timeout (the test above only reaches the Python loop's: a session's first request, which
    prepares, is always the Python loop's). Four sessions stuck, counted over time, means at least
    two were given up on, each a TimeoutError (two connections: a third session is a reopened one);
    after the rollback the run goes on to its count (a count, not a duration: the fault and the
    recovery are waited for, however slow the machine)."""
    props = {"postgres.url": pg_url, **MIX, "table": "loopstall", "postgres.timeout": "0.3"}
    props.update(readproportion="0", updateproportion="1", insertproportion="0", scanproportion="0")
    props.update(readmodifywriteproportion="0", operationcount="20000", maxexecutiontime="120")
    props.update(insertcount="200")
    phase("postgres", props, "load")

    def stall() -> None:
        with psycopg.connect(pg_url, autocommit=True) as watcher, psycopg.connect(pg_url) as blocker:
            wait_for_updates(watcher, "loopstall", 200)  # both sessions past their first request
            blocker.execute("SELECT * FROM loopstall FOR UPDATE")  # every row: each UPDATE now waits
            try:
                wait_for_stuck_updates(watcher, "loopstall", 4)
            finally:
                blocker.rollback()  # at once: a hold of 3 s of failures alone would end the run

    staller = Background(stall)
    staller.start()
    run = phase("postgres", props, "run", threads=2)
    staller.join()
    assert ran_on(run, pq_loop) and not run.aborted, (run.extra, run.validity)
    updates = statuses_of(run.operations, "UPDATE")
    assert run.extra["error_kinds"]["UPDATE:TimeoutError"] >= 2
    assert run.extra["error_kinds"] == {"UPDATE:TimeoutError": updates["ERROR"]}
    assert updates.get("OK", 0) > 0
    assert sum(updates.values()) == 20000
    assert run.operations["UPDATE"].operations == run.operations_total == 20000 - updates["ERROR"]
    assert run.operations["UPDATE-FAILED"].max_us >= 300_000  # the timeouts' own latencies
    assert_honest(run)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE loopstall")


def test_postgres_sessions_terminated_mid_run_reconnect_and_go_on(pg_url: str, pq_loop: str) -> None:
    """A count of reads (not a duration: the fault and the recovery are waited for, however slow
    the machine): the three sessions are terminated mid-run, and three new ones read on."""
    props = {"postgres.url": pg_url, **MIX, "table": "loopterm", "operationcount": "20000"}
    props.update(readproportion="1", updateproportion="0", insertproportion="0", scanproportion="0")
    props.update(readmodifywriteproportion="0", maxexecutiontime="120", insertcount="200")
    phase("postgres", props, "load")

    def terminate() -> None:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            first = wait_for_reads(conn, "loopterm", 3)
            for pid in first:
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            wait_for_reads(conn, "loopterm", 3, but=frozenset(first))  # and on it went, on new sessions

    killer = Background(terminate)
    killer.start()
    run = phase("postgres", props, "run", threads=3)
    killer.join()
    assert ran_on(run, pq_loop) and not run.aborted
    reads = statuses_of(run.operations, "READ")
    assert 1 <= reads.get("ERROR", 0) <= 6  # the request in flight on each terminated session
    assert set(run.extra["error_kinds"]) <= {"READ:ConnectionError", "READ:AdminShutdown"}
    assert sum(run.extra["error_kinds"].values()) == reads["ERROR"]
    assert sum(reads.values()) == 20000
    assert run.operations_total == 20000 - reads["ERROR"] and run.failed_total == reads["ERROR"]
    assert_honest(run)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE loopterm")


def test_postgres_server_killed_mid_run_ends_with_a_flagged_partial_result(
    private_postgres: tuple[subprocess.Popen[bytes], str],
    pq_loop: str,
) -> None:
    proc, url = private_postgres
    props = {"postgres.url": url, **MIX, "operationcount": "0", "maxexecutiontime": "120"}
    props.update(readproportion="1", updateproportion="0", insertproportion="0", scanproportion="0")
    props.update(readmodifywriteproportion="0", insertcount="200")
    phase("postgres", props, "load")

    def kill_when_under_way(elapsed: float, ops: int, rate: float) -> None:
        if ops > 100 and proc.poll() is None:  # the run's own count, as its workers publish it
            kill_group(proc)

    config = PhaseConfig("ycsb", "run", "postgres", props, seed=11, threads=2, processes=1)
    run = run_phase(config, progress=kill_when_under_way)
    assert proc.poll() is not None
    assert ran_on(run, pq_loop)
    assert run.aborted, (run.operations, run.extra, run.runtime_ms)
    assert any(f.code == "server_lost" for f in run.validity)
    reads = statuses_of(run.operations, "READ")
    assert reads["OK"] > 100 and reads["ERROR"] >= 2
    assert run.operations_total == reads["OK"] and run.failed_total == reads["ERROR"]
    assert_honest(run)
    assert set(run.extra["error_kinds"]) <= {"READ:ConnectionError", "READ:TargetUnreachable"}
    # it gave up after a few (3) seconds of failures, not at the deadline (120 s), however long the
    # run took to get under way on a loaded machine
    assert run.runtime_ms < 60_000


def test_postgres_a_statement_the_server_refuses_fails_each_request_and_the_run_ends(
    pg_url: str, pq_loop: str
) -> None:
    """Reads of columns the table does not have: PREPARE fails for every request. Each is one
    UndefinedColumn error, the loop keeps turning (no request starts the next from inside the last),
    and after every request has failed for 3 s the run stops, flagged server_lost."""
    props = {"postgres.url": pg_url, **MIX, "table": "loopcols", "fieldcount": "1"}
    props.update(readproportion="1", updateproportion="0", insertproportion="0", scanproportion="0")
    props.update(readmodifywriteproportion="0", operationcount="0", maxexecutiontime="120")
    phase("postgres", props, "load")
    run = phase(
        "postgres", {**props, "fieldnameprefix": "nosuchcol", "readallfields": "false"}, "run", threads=2
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE loopcols")
    assert ran_on(run, pq_loop)
    codes = {f.code for f in run.validity}
    assert "server_lost" in codes and "worker_lost" not in codes
    assert "READ" not in run.operations  # every read failed: no READ entry, no throughput
    failed = run.operations["READ-FAILED"].statuses
    assert set(failed) == {"ERROR"} and failed["ERROR"] >= 300
    assert run.extra["error_kinds"] == {"READ:UndefinedColumn": failed["ERROR"]}
    assert run.operations_total == 0 and run.throughput == 0 and run.error_rate == 1.0
    assert_honest(run)
    assert run.runtime_ms < 60_000  # it gave up after 3 s of failures, not at the deadline (120 s)


# ------------------------------------------------------------------ the Redis loop's faults
# The redis-bench loop's fault tests (tests/runner/test_event_loop.py) for YCSB on Redis: a dropped
# connection, a killed server, a server that stops answering. Each acts only on a redis-server this
# test started itself (private_redis, 127.0.0.1).
READS_ONLY = {"readproportion": "1", "updateproportion": "0", "insertproportion": "0"}
READS_ONLY |= {"scanproportion": "0", "readmodifywriteproportion": "0", "insertcount": "200"}


def private_client(props: dict[str, str]) -> redis.Redis:
    return redis.Redis(host=props["redis.host"], port=int(props["redis.port"]))


def gets(client: redis.Redis) -> int:
    """How many GETs the server has answered."""
    return int(client.info("commandstats").get("cmdstat_get", {}).get("calls", 0))


def wait_for_gets(client: redis.Redis, count: int) -> None:
    """Until the server has answered ``count`` GETs (bounded: 60 s): the run is under way."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if gets(client) >= count:
            return
        time.sleep(0.02)  # polling the server's own counters: a readiness probe
    raise AssertionError(f"no {count} GETs within 60 s")


# The Redis fault tests that expect the run to go on run a count of reads, not a duration: the
# fault comes once 300 have been answered, however slow the machine, and the run goes on well past it.
READS = 30000


def test_redis_connections_dropped_mid_run_reconnect_and_go_on(
    private_redis: tuple[subprocess.Popen[bytes], dict[str, str]],
    resp_loop: str,
) -> None:
    _, server = private_redis
    props = {**server, **MIX, **READS_ONLY, "redis.datatype": "string", "fieldcount": "1"}
    props.update(operationcount=str(READS), maxexecutiontime="120")
    phase("redis", props, "load")
    client = private_client(server)
    dropped_at: list[int] = []

    def drop() -> None:
        wait_for_gets(client, 300)
        client.client_kill_filter(_type="normal", skipme=True)  # every run connection, mid-request
        dropped_at.append(gets(client))

    killer = Background(drop)
    killer.start()
    run = phase("redis", props, "run", threads=3)
    killer.join()
    answered = gets(client)
    client.close()
    assert ran_on(run, resp_loop) and not run.aborted
    reads = statuses_of(run.operations, "READ")
    assert 1 <= reads.get("ERROR", 0) <= 3  # at most the request in flight on each dropped connection
    assert run.extra["error_kinds"] == {"READ:ConnectionError": reads["ERROR"]}
    assert sum(reads.values()) == READS
    assert run.operations_total == READS - reads["ERROR"] and run.failed_total == reads["ERROR"]
    assert_honest(run)
    assert answered - dropped_at[0] >= 1000  # and on it went, on new connections


def test_redis_server_killed_mid_run_ends_with_a_flagged_partial_result(
    private_redis: tuple[subprocess.Popen[bytes], dict[str, str]],
    resp_loop: str,
) -> None:
    proc, server = private_redis
    props = {**server, **MIX, **READS_ONLY, "redis.datatype": "string", "fieldcount": "1"}
    props.update(operationcount="0", maxexecutiontime="120")
    phase("redis", props, "load")
    client = private_client(server)

    def kill() -> None:
        wait_for_gets(client, 300)
        proc.kill()
        proc.wait()

    killer = Background(kill)
    killer.start()
    run = phase("redis", props, "run", threads=2)
    killer.join()
    client.close()
    assert ran_on(run, resp_loop)
    assert run.aborted and any(f.code == "server_lost" for f in run.validity)
    reads = statuses_of(run.operations, "READ")
    assert reads["OK"] >= 300 and reads["ERROR"] >= 2
    assert set(run.extra["error_kinds"]) <= {"READ:ConnectionError", "READ:TargetUnreachable"}
    assert run.operations_total == reads["OK"] and run.failed_total == reads["ERROR"]
    assert_honest(run)
    # it gave up after a few (3) seconds of failures, not at the deadline (120 s), however long the
    # run took to get under way on a loaded machine
    assert run.runtime_ms < 60_000


def test_redis_server_that_stops_answering_is_a_timeout_and_the_run_goes_on(
    private_redis: tuple[subprocess.Popen[bytes], dict[str, str]],
    resp_loop: str,
) -> None:
    """CLIENT PAUSE: the server takes the requests and answers none for 1 s. Each request in flight
    fails after redis.timeout as a TimeoutError (not a hang), its connection is reopened, and once
    the pause ends the reads succeed again; 1 s of failures is well under the 3 s give-up."""
    _, server = private_redis
    props = {**server, **MIX, **READS_ONLY, "redis.datatype": "string", "fieldcount": "1"}
    props.update(operationcount=str(READS), maxexecutiontime="120", **{"redis.timeout": "0.3"})
    phase("redis", props, "load")
    client = private_client(server)
    paused_at: list[int] = []

    def pause() -> None:
        wait_for_gets(client, 300)
        client.execute_command("CLIENT", "PAUSE", 1000, "ALL")
        paused_at.append(gets(client))  # no GET is answered from here until the pause ends

    pauser = Background(pause)
    pauser.start()
    run = phase("redis", props, "run", threads=2)
    pauser.join()
    answered = gets(client)
    client.close()
    assert ran_on(run, resp_loop) and not run.aborted
    kinds = run.extra["error_kinds"]
    assert kinds.get("READ:TimeoutError", 0) >= 2  # at least the request in flight on each connection
    assert set(kinds) <= {"READ:TimeoutError", "READ:ConnectionError", "READ:TargetUnreachable"}
    assert run.operations["READ-FAILED"].max_us >= 300_000  # the timeouts' own latencies
    reads = statuses_of(run.operations, "READ")
    assert sum(reads.values()) == READS and sum(kinds.values()) == reads["ERROR"]
    assert run.operations_total == READS - reads["ERROR"]
    assert_honest(run)
    assert answered - paused_at[0] >= 1000  # answered again after the pause
