"""sysbench's documented invocations (`sysbench [options]... TESTNAME COMMAND`) with the binary name
swapped for `benchwright sysbench`, on MariaDB and PostgreSQL: same exit code, and the lines of
stdout in sysbench's shapes and order.

Left out by the mirror (OMITTED): its version line names Benchwright, and reconnects and threads
fairness are not counted."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from tests.compat.side_by_side import run_mirror, run_native, shapes

pytestmark = [pytest.mark.slow, pytest.mark.servers]  # `connection` asks for pg_url or mysql_url by name
OMITTED = (
    "sysbench ",
    "    reconnects:",
    "Threads fairness:",
    "    events (avg/stddev):",
    "    execution time (avg/stddev):",
    "benchwright: ",
)
# one thread's line ending "..." or a quoted table name, then another thread's line
JOINED = re.compile(r"(?:\.\.\.|')(?=[A-Z])")


def driver_flags(driver: str, url: str) -> list[str]:
    parts = urlsplit(url)
    return [
        f"--db-driver={driver}",
        f"--{driver}-host={parts.hostname}",
        f"--{driver}-port={parts.port}",
        f"--{driver}-user={parts.username}",
        f"--{driver}-password={parts.password}",
        f"--{driver}-db={parts.path.lstrip('/')}",
    ]


@pytest.fixture(params=["mysql", "pgsql"])
def connection(request: pytest.FixtureRequest) -> list[str]:
    fixture = "mysql_url" if request.param == "mysql" else "pg_url"
    return driver_flags(request.param, request.getfixturevalue(fixture))


@pytest.mark.parametrize(
    "options",
    [
        ["oltp_read_write", "--threads=2", "--time=2", "--report-interval=1"],
        ["oltp_read_only", "--events=200", "--time=0", "--rand-type=uniform", "--rand-seed=7"],
        ["oltp_point_select", "--threads=2", "--time=2", "--rate=200", "--histogram", "--percentile=99"],
        ["--skip-trx", "oltp_write_only", "--time=1"],
    ],
    ids=[
        "read-write-intervals",
        "read-only-events-seed",
        "point-select-rate-histogram",
        "write-only-skip-trx",
    ],
)
def test_prepare_run_cleanup_print_sysbench_s_lines(options: list[str], connection: list[str]) -> None:
    argv = ["sysbench", *options, *connection, "--tables=2", "--table-size=500"]
    native = [run_native([*argv, command]) for command in ("prepare", "run", "cleanup")]
    mirror = [run_mirror([*argv, command]) for command in ("prepare", "run", "cleanup")]
    for command, theirs, ours in zip(("prepare", "run", "cleanup"), native, mirror, strict=True):
        assert (ours.code, theirs.code) == (0, 0), (command, ours.err, theirs.out, theirs.err)
        mine, native_lines = shapes(ours.out, OMITTED), shapes(theirs.out, OMITTED)
        assert mine, f"{command}: the mirror printed nothing"
        if command == "prepare":  # sysbench's threads interleave their tables' lines, even mid-line
            mine, native_lines = unjoined(mine), unjoined(native_lines)
        assert mine == native_lines, (command, ours.out, theirs.out)


def unjoined(lines: list[str]) -> list[str]:
    """The distinct lines of a prepare, sorted, with what two threads printed on one line ("...Creating
    a secondary index on 'sbtestN'...Creating a secondary index on 'sbtestN'...", or "Inserting N
    records into 'sbtestN'Inserting N records into 'sbtestN'": timing, not format) split back into its
    lines."""
    return sorted({part for line in lines for part in JOINED.sub(lambda m: m[0] + "\n", line).splitlines()})
