"""pgbench's documented invocations with the binary name swapped for `benchwright pgbench`, against
the same PostgreSQL database: same exit code, and each stream's lines in pgbench's shapes and order.

What the mirror leaves out of pgbench's output is listed (OMITTED), never silently different: the
initial connection time (not measured), the retry limit line (our transactions retry on
serialization failures) and the server's NOTICEs; Benchwright's own notes ("benchwright: warning:
...") are extra. The schedule lag has no maximum (CHANGED): the lag is the difference of two
histograms' means, per transaction it is not kept."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from tests.compat.side_by_side import run_mirror, run_native, shapes

pytestmark = pytest.mark.slow
OMITTED = ("initial connection time", "maximum number of tries", "NOTICE:", "pgbench (", "benchwright: ")
CHANGED = {"rate limit schedule lag: avg N (max N) ms": "rate limit schedule lag: avg N ms"}


@pytest.fixture(scope="module")
def connection(pg_url: str) -> tuple[list[str], dict[str, str]]:
    """pgbench's connection flags for the module's database, the password in PGPASSWORD."""
    url = urlsplit(pg_url)
    flags = ["-h", url.hostname or "", "-p", str(url.port), "-U", url.username or ""]
    return [*flags, url.path.lstrip("/")], {"PGPASSWORD": url.password or ""}


def side_by_side(args: list[str], connection: tuple[list[str], dict[str, str]]) -> None:
    conn, env = connection
    theirs = run_native(["pgbench", *args, *conn], env)
    ours = run_mirror(["pgbench", *args, *conn], env)
    assert (ours.code, theirs.code) == (0, 0), (ours.err, theirs.err)
    for stream in ("out", "err"):
        mine = shapes(getattr(ours, stream), OMITTED)
        native = [CHANGED.get(line, line) for line in shapes(getattr(theirs, stream), OMITTED)]
        assert mine == native, (stream, mine, native)
    assert shapes(ours.out + ours.err), "the mirror printed nothing"


@pytest.mark.parametrize(
    "args",
    [
        ["-i", "-s", "1"],
        ["-i", "-I", "dtgvpf", "-F", "90"],
        ["-i", "-q", "--foreign-keys"],
    ],
    ids=["init", "init-steps", "foreign-keys"],
)
def test_initialisation_prints_pgbench_s_steps(
    args: list[str], connection: tuple[list[str], dict[str, str]]
) -> None:
    side_by_side(args, connection)


@pytest.mark.parametrize(
    "args",
    [
        ["-c", "2", "-j", "2", "-T", "2", "-P", "1"],
        ["-S", "-t", "20", "-M", "prepared"],
        ["-N", "-t", "20", "-L", "50", "-n"],
        ["-b", "select", "-c", "2", "-T", "2", "-R", "100", "-P", "1", "--progress-timestamp"],
    ],
    ids=["tpcb-like-progress", "select-only-prepared", "simple-update-latency-limit", "rate-timestamps"],
)
def test_runs_print_pgbench_s_summary(args: list[str], connection: tuple[list[str], dict[str, str]]) -> None:
    run_native(["pgbench", "-i", *connection[0]], connection[1])
    side_by_side(args, connection)


def test_the_first_line_names_the_mirror_and_the_server(connection: tuple[list[str], dict[str, str]]) -> None:
    conn, env = connection
    ours = run_mirror(["pgbench", "-S", "-t", "5", *conn], env)
    assert ours.code == 0, ours.err
    assert re.match(r"pgbench \(benchwright \d+\.\d+\.\d+\S*, server \d+\.\d+", ours.out), ours.out


@pytest.mark.parametrize(("limit", "above"), [("100000", "0/50"), ("0.001", "50/50")])
def test_the_latency_limit_counts_the_slower_transactions(
    limit: str, above: str, connection: tuple[list[str], dict[str, str]]
) -> None:
    conn, env = connection
    run_native(["pgbench", "-i", *conn], env)
    ours = run_mirror(["pgbench", "-S", "-t", "50", "-L", limit, *conn], env)
    assert ours.code == 0, ours.err
    assert f" ms latency limit: {above} (" in ours.out, ours.out
