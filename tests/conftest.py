"""Shared fixtures: connections to the throwaway local servers of scripts/local-servers.

Each test module gets its own PostgreSQL and MariaDB database and its own Redis logical database, so
modules never see each other's tables. The servers must be up (`make servers`); a fixture that cannot
reach its server fails the test with the command to run, it never skips.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

# Each test process measures on its own: runners of one pytest process see each other through this
# directory (runner/host_lock.py), never those of another process of the same session (pytest-xdist
# workers) or of another checkout's tests on the machine, which would make their phases
# "concurrent_benchmark". tests/unit/test_host_lock.py points it elsewhere to make them meet.
os.environ["BENCHWRIGHT_HOST_LOCK_DIR"] = tempfile.mkdtemp(prefix="bw-host-lock-")
# The tests start hundreds of Python processes (pytest-xdist workers, `benchwright` commands, runners,
# handlers): with PYTHONDONTWRITEBYTECODE set (some CI images and sandboxes set it) none caches its
# compiled modules, so each compiles the package from source again, 1.5 s of CPU per process here.
# The caches land in __pycache__ directories, which git and the Lambda asset ignore.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def _use_this_workers_server_set() -> None:
    """With ``BENCHWRIGHT_SERVER_SETS=N`` (scripts/server-tiers), pytest-xdist worker ``gwK`` tests
    against server set ``K % N + 1`` of scripts/local-servers (ports 10000 * (set - 1) above the
    first set's), so that two workers never share a server: a test may pause, fill or reconfigure
    its server, and measured phases on one server would disturb each other's numbers."""
    sets = int(os.environ.get("BENCHWRIGHT_SERVER_SETS", "1"))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if sets < 2 or not worker.startswith("gw"):
        return
    shift = 10000 * (int(worker[2:]) % sets)
    for name, first in (("PG", 15432), ("MYSQL", 13306), ("REDIS", 16379)):
        os.environ[f"BENCHWRIGHT_{name}_PORT"] = str(first + shift)  # the runs' subprocesses see it too


_use_this_workers_server_set()
PG_PORT = int(os.environ.get("BENCHWRIGHT_PG_PORT", "15432"))
MYSQL_PORT = int(os.environ.get("BENCHWRIGHT_MYSQL_PORT", "13306"))
REDIS_PORT = int(os.environ.get("BENCHWRIGHT_REDIS_PORT", "16379"))
USER = PASSWORD = "bench"
HINT = "start the local servers first: scripts/local-servers start"
# Stand-in AWS credentials for moto, set in one place: boto3 never finds a real account's here.
AWS_TEST_REGION = "us-east-1"
FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": AWS_TEST_REGION,
    "AWS_REGION": AWS_TEST_REGION,
}


def pytest_configure(config: pytest.Config) -> None:
    """Tests interrupt their child processes as Ctrl-C would. A suite started from a shell's background
    job (``make test &`` in a script) inherits SIGINT ignored, and children would inherit that across
    exec and never see the signal; Python's own handler here is reset to the default in each child."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# A test that takes one of these reaches the shared servers: it is a ``servers`` test wherever it lives.
# ``aws_world`` (and ``world`` on top of it) logs in to the shared PostgreSQL: the stand-in RDS target.
SERVER_FIXTURES = frozenset({"pg_url", "mysql_url", "redis_props", "aws_world"})
# The moto AWS account of the workflow tests (``aws_world``, ``world``), shared by the function,
# state machine, runner and infra suites: one plugin module, no suite imports another's fixtures.
pytest_plugins = ["tests.aws_world"]


# The files that take longest in their tier (`--durations` of a CI run, 2026-11-29), longest first.
LONGEST_FIRST = {
    path: rank
    for rank, path in enumerate(
        (
            "tests/e2e/test_nightly_regression_delay.py",  # server-free tier: 80-130 s, mostly waiting
            "tests/infra/test_deploy_check.py",
            "tests/statemachines/test_benchmark_failures.py",  # shared-servers tier; 45-50 s alone on a quiet host
            "tests/statemachines/test_benchmark_workflow.py",
            "tests/runner/test_dataset_identity.py",
            "tests/runner/test_event_loop_mysql.py",
            "tests/statemachines/test_suite_workflow.py",
            "tests/runner/test_event_loop_sql.py",
            "tests/e2e/test_seed_tables.py",
            "tests/runner/test_event_loop_ycsb.py",
            "tests/infra/test_iam_coverage.py",
            "tests/functions/test_aws_integration.py",
            "tests/e2e/test_dataset_identity_runs.py",
            "tests/runner/test_tpcc_engines.py",  # two TPC-C loads of one warehouse: 40-57 s each at load
        )
    )
}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Local servers an earlier, killed test session of this checkout left running are stopped
    (only those whose creating process has exited: providers/local/stray.py)."""
    from benchwright.providers.local import stray

    stray.sweep(print)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a server fixture ``servers``, so the marker is true by construction:
    ``make test-fast`` (``-m "not servers"``) then never reaches for a server that is not running.
    Tests that reach the servers another way (a URL built from ``PG_PORT``...) carry the mark by hand."""
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.servers)
    # Longest first: pytest-xdist hands out tests (or files, --dist loadfile) in collection order, so a
    # long file collected last runs alone on one worker while the others idle. A stable sort keeps
    # each file's own order and everything else where it was.
    items.sort(key=lambda item: LONGEST_FIRST.get(item.nodeid.split("::", 1)[0], len(LONGEST_FIRST)))


@pytest.fixture(scope="session", autouse=True)
def moto_cache_calls() -> None:
    """moto 5.2.5 has no ElastiCache/MemoryDB parameter groups, TestFailover or FailoverShard: every
    moto account in the tests answers them as the rehearsal's does (rehearse/services/cache_calls.py)."""
    from benchwright.rehearse.services.cache_calls import install

    install()


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's stand-in credentials and region for one test (FAKE_AWS_ENV)."""
    for key, value in FAKE_AWS_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """A libpq URL to a fresh, empty PostgreSQL database, dropped after the module."""
    import psycopg

    name = f"bw_test_{secrets.token_hex(4)}"
    admin = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"CREATE DATABASE {name}")
            # A commit need not wait for its WAL flush in a database dropped after the module: with
            # fsync on (scripts/local-servers), that wait is 5-10 ms a commit on a loaded host, most
            # of the writing tests' time. Every session on this database only, never the server's.
            conn.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL on 127.0.0.1:{PG_PORT} unreachable ({exc}); {HINT}")
    yield f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="module")
def mysql_url() -> Iterator[str]:
    """A URL to a fresh, empty MariaDB database, dropped after the module."""
    import MySQLdb

    name = f"bw_test_{secrets.token_hex(4)}"
    try:
        conn = MySQLdb.connect(
            host="127.0.0.1", port=MYSQL_PORT, user=USER, password=PASSWORD, connect_timeout=5
        )
    except MySQLdb.OperationalError as exc:
        pytest.fail(f"MariaDB on 127.0.0.1:{MYSQL_PORT} unreachable ({exc}); {HINT}")
    conn.cursor().execute(f"CREATE DATABASE {name}")
    yield f"mysql://{USER}:{PASSWORD}@127.0.0.1:{MYSQL_PORT}/{name}"
    conn.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
    conn.close()


# Logical databases 1..63 of the shared Redis are handed out through claims kept in database 0: a
# random pick collided now and then with another test session on the same server (one module's
# data under another's FLUSHDB). A claim is SET NX (atomic on the server), released by its owner
# only, and expires on its own if its session was killed (longer than any CI run).
REDIS_CLAIM = "benchwright:test-claim:db{}"
REDIS_CLAIM_TTL_S = 4 * 3600
RELEASE_CLAIM = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def claim_redis_db(admin: Any, owner: str) -> int:
    """A logical database no other session holds (random order: concurrent sessions rarely race for
    the same one, and SET NX settles a race)."""
    dbs = list(range(1, 64))
    random.shuffle(dbs)
    for db in dbs:
        if admin.set(REDIS_CLAIM.format(db), owner, nx=True, ex=REDIS_CLAIM_TTL_S):
            return db
    pytest.fail(f"every Redis database 1-63 on 127.0.0.1:{REDIS_PORT} is claimed by another test session")


@pytest.fixture(scope="module")
def redis_props() -> Iterator[dict[str, str]]:
    """Connection properties for an emptied Redis logical database (1..63) of our own (claimed)."""
    import redis

    def connect(db: int) -> Any:
        return redis.Redis(host="127.0.0.1", port=REDIS_PORT, password=PASSWORD, db=db, socket_timeout=5)

    admin = connect(0)
    owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    try:
        db = claim_redis_db(admin, owner)
    except redis.ConnectionError as exc:
        pytest.fail(f"Redis on 127.0.0.1:{REDIS_PORT} unreachable ({exc}); {HINT}")
    client = connect(db)
    try:
        client.flushdb()
        yield {
            "redis.host": "127.0.0.1",
            "redis.port": str(REDIS_PORT),
            "redis.password": PASSWORD,
            "redis.db": str(db),
        }
        client.flushdb()
    finally:
        client.close()
        admin.eval(RELEASE_CLAIM, 1, REDIS_CLAIM.format(db), owner)
        admin.close()
