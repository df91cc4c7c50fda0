"""redis-benchmark's README examples with the binary name swapped for `benchwright redis-benchmark`,
against the same Redis database: same exit code, the same CSV header and rows (`--csv`), the same
`-q` lines, test for test.

Left out by the mirror: redis-benchmark's timed `LPUSH (needed to benchmark LRANGE)` pass (the list
is filled untimed, before the measured tests). Its live `rps=` line goes to stderr, not stdout, a line
per second in a log, and not at all with -q (tests/runner/test_redisbench_redis.py)."""

from __future__ import annotations

import csv
import io

import pytest

from tests.compat.side_by_side import run_mirror, run_native, shapes

pytestmark = pytest.mark.slow
FILL = "LPUSH (needed to benchmark LRANGE)"


@pytest.fixture
def connection(redis_props: dict[str, str]) -> list[str]:
    return [
        "-h", redis_props["redis.host"], "-p", redis_props["redis.port"],
        "-a", redis_props["redis.password"], "--dbnum", redis_props["redis.db"],
    ]  # fmt: skip


def quiet_lines(text: str) -> list[str]:
    """What each -q line settles to on a terminal (the captured text has the live `rps=` updates
    that carriage returns overwrite as lines of their own)."""
    return [line.strip() for line in text.splitlines() if line.strip() and " rps=" not in line]


@pytest.mark.parametrize(
    "tests",
    ["ping,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,mset", "lrange_100,lrange_300"],
)
def test_csv_has_redis_benchmark_s_header_and_rows(tests: str, connection: list[str]) -> None:
    argv = ["redis-benchmark", *connection, "-t", tests, "-n", "2000", "-c", "4", "--csv"]
    theirs, ours = run_native(argv), run_mirror(argv)
    assert (ours.code, theirs.code) == (0, 0), (ours.err, theirs.err)
    native = list(csv.reader(io.StringIO(theirs.out)))
    mine = list(csv.reader(io.StringIO(ours.out)))
    assert mine[0] == native[0]
    assert [row[0] for row in mine[1:]] == [row[0] for row in native[1:] if row[0] != FILL]
    for row in mine[1:]:
        assert len(row) == len(native[0]) and float(row[1]) > 0 and all(float(v) >= 0 for v in row[2:])
        assert float(row[3]) <= float(row[4]) <= float(row[5]) <= float(row[6]) <= float(row[7])


def test_quiet_prints_one_line_per_test(connection: list[str]) -> None:
    argv = ["redis-benchmark", *connection, "-t", "set,lpush,ping", "-n", "2000", "-q"]
    theirs, ours = run_native(argv), run_mirror(argv)
    assert (ours.code, theirs.code) == (0, 0), (ours.err, theirs.err)
    assert shapes("\n".join(quiet_lines(ours.out)), ("warning:",)) == shapes(
        "\n".join(quiet_lines(theirs.out))
    )


def test_an_option_redis_benchmark_has_but_the_mirror_lacks_is_refused(connection: list[str]) -> None:
    ours = run_mirror(["redis-benchmark", *connection, "--threads", "4"])
    assert ours.code == 1 and "--threads" in ours.err and ours.out == ""
    ours = run_mirror(["redis-benchmark", *connection, "--no-such"])
    assert ours.code == 1 and "--no-such" in ours.err and ours.out == ""
