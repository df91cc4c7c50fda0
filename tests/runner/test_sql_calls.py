"""The SQL run streams' thread executor (``workloads/sqlscript/sql_calls.py``) on the real servers:
a transaction that comes back RETRY is re-run with the same statements, each attempt its own
operation and each rolled back; with one try the stream goes on (OLTP, as sysbench); a duplicate key
is a RETRY when the stream says so, on both engines; a dialogue's statements are made again for each
attempt, are answered as the driver answers them, and an abort rolls the transaction back as a
USER_ABORT. The errors are the servers' own (a PL/pgSQL RAISE with a SQLSTATE, a real duplicate)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchwright.runner.drivers import new_driver
from benchwright.runner.measure import Status
from benchwright.runner.workloads.sqlscript.sql_calls import SqlCalls, thread_operations
from benchwright.runner.workloads.sqlscript.sqlkit import UserAbort

pytestmark = pytest.mark.servers

INSERT = "INSERT INTO t (id) VALUES (%s)"
# fails its first two calls with a serialization failure (a sequence is not rolled back)
FLAKY = (
    "DO $$ BEGIN IF nextval('attempts') < 3 THEN"
    " RAISE EXCEPTION 'contended' USING ERRCODE = 'serialization_failure'; END IF; END $$"
)


@pytest.fixture
def pg(pg_url: str) -> Iterator[Any]:
    db: Any = new_driver("postgres", {"postgres.url": pg_url})
    db.connect()
    for statement in (
        "DROP TABLE IF EXISTS t",
        "DROP SEQUENCE IF EXISTS attempts",
        "CREATE TABLE t (id INTEGER PRIMARY KEY)",
        "CREATE SEQUENCE attempts",
    ):
        db.execute(statement)
    yield db
    db.close()


def run(items: Any) -> list[tuple[str, Status]]:
    """Each operation of the items, called in turn as the engine calls them."""
    return [(name, call()) for name, call in thread_operations(items)]


def ids(db: Any) -> list[int]:
    return [row[0] for row in db.fetchall("SELECT id FROM t ORDER BY id")]


def test_a_retried_transaction_is_re_run_with_its_statements_each_attempt_timed_and_rolled_back(
    pg: Any,
) -> None:
    make = SqlCalls(pg)
    done = run(
        [make.transaction("tpcb-like", [(INSERT, (7,)), (FLAKY, ())]), make.statement("q", "SELECT 1", ())]
    )
    retry, ok = Status.RETRY, Status.OK
    assert done == [("tpcb-like", retry), ("tpcb-like", retry), ("tpcb-like", ok), ("q", ok)]
    assert ids(pg) == [7]  # the failed attempts left nothing


def test_with_one_try_a_retry_is_counted_and_the_stream_goes_on(pg: Any) -> None:
    make = SqlCalls(pg, tries=1)
    items = [make.transaction("oltp_read_write", [(INSERT, (n,)), (FLAKY, ())]) for n in (1, 2, 3)]
    assert [status for _, status in run(items)] == [Status.RETRY, Status.RETRY, Status.OK]
    assert ids(pg) == [3]


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
@pytest.mark.parametrize("block", [True, False], ids=["transaction", "autocommit"])
def test_a_duplicate_key_is_a_retry_only_where_the_stream_says_so(
    engine: str, block: bool, pg_url: str, mysql_url: str
) -> None:
    db: Any = new_driver(
        engine, {"postgres.url": pg_url} if engine == "postgres" else {"mysql.url": mysql_url}
    )
    db.connect()
    try:
        db.execute("DROP TABLE IF EXISTS d")
        db.execute("CREATE TABLE d (id INTEGER PRIMARY KEY)")
        db.execute("INSERT INTO d (id) VALUES (1)")
        make = SqlCalls(db, tries=1)
        again = [("INSERT INTO d (id) VALUES (%s)", (1,))]
        assert run([make.transaction("x", again, block=block, retry_on=("UniqueViolation",))]) == [
            ("x", Status.RETRY)
        ]
        with pytest.raises(Exception, match=r"(?i)duplicate") as raised:
            run([make.transaction("x", again, block=block)])
        assert db.classify(raised.value) is Status.ERROR
        assert db.fetchall("SELECT id FROM d") == [(1,)]
    finally:
        db.close()


def test_a_dialogue_is_answered_as_the_driver_answers_made_again_per_attempt_and_aborts_roll_back(
    pg: Any,
) -> None:
    made: list[str] = []

    def steps(kind: str, n: int = 2) -> Any:
        def make() -> Any:
            made.append(kind)
            (row,) = yield "fetchall", "SELECT 40 + %s", (n,)
            changed = yield "execute", INSERT, (row[0],)
            assert changed == 1
            if kind == "flaky":
                yield "execute", FLAKY, ()
            elif kind == "abort":
                raise UserAbort("unused item")
            elif kind == "lookup":
                raise LookupError("no such customer")

        return make

    calls = SqlCalls(pg)
    aborts = (UserAbort, LookupError)
    assert run([calls.dialogue("NewOrder", steps("abort"), aborts=aborts)]) == [
        ("NewOrder", Status.USER_ABORT)
    ]
    assert run([calls.dialogue("Payment", steps("lookup"), aborts=aborts)]) == [
        ("Payment", Status.USER_ABORT)
    ]
    assert ids(pg) == []  # both rolled back
    assert [s for _, s in run([calls.dialogue("Delivery", steps("flaky"), aborts=aborts)])] == [
        Status.RETRY,
        Status.RETRY,
        Status.OK,
    ]
    assert made == ["abort", "lookup", "flaky", "flaky", "flaky"]  # the statements made once per attempt
    assert ids(pg) == [42]
    with pytest.raises(LookupError):  # not an abort of this stream: the engine counts an error
        run([calls.dialogue("Payment", steps("lookup", 3), aborts=(UserAbort,))])
    assert ids(pg) == [42]
