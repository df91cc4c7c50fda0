"""pgbench's documented invocations with the binary name swapped for `benchwright pgbench`, against
the same PostgreSQL database: same exit code, and each stream's lines in pgbench's shapes and order.

What the mirror leaves out of pgbench's output is listed (OMITTED), never silently different: the
initial connection time (not measured), the retry limit line (our transactions retry on
serialization failures) and the server's NOTICEs; Benchwright's own notes ("benchwright: warning:
...") are extra. The schedule lag has no maximum (CHANGED): the lag is the difference of two
histograms' means, per transaction it is not kept."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from benchwright.results import ResultDocument
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


# pgbench's documentation's custom-script features: \set with the random family and arithmetic,
# a statement over two lines, :variables, \sleep, -D; then weights and a mix with -b
ACCOUNTS = """\\set aid random(1, 100000 * :scale)
\\set delta random_gaussian(-5000, 5000, 2.5)
\\set pause random_exponential(1, 3, 2.0)
-- a comment
SELECT abalance FROM pgbench_accounts
  WHERE aid = :aid;
\\sleep :pause us
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
"""
ZIPF = """\\set x random_zipfian(1, 1000, 1.07) % 10 + :offset
SELECT :x * 2, (:x - 1) / 3;
"""


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    where = tmp_path_factory.mktemp("scripts")
    (where / "accounts.sql").write_text(ACCOUNTS)
    (where / "zipf.sql").write_text(ZIPF)
    return str(where / "accounts.sql"), str(where / "zipf.sql")


@pytest.mark.parametrize(
    "args",
    [
        ["-f", "{a}", "-t", "10", "-r"],
        ["-f", "{a}@3", "-f", "{z}", "-b", "select@2", "-c", "2", "-t", "20", "-r", "-D", "offset=1"],
        ["-f", "{z}", "-D", "offset=5", "-M", "prepared", "-T", "2", "-P", "1", "-n"],
        ["-f", "{a}", "-S", "-c", "2", "-t", "15", "-L", "100", "-n"],
    ],
    ids=["file-per-statement", "weighted-mix-per-statement", "prepared-progress-define", "file-and-builtin"],
)
def test_custom_scripts_print_pgbench_s_summary(
    args: list[str], scripts: tuple[str, str], connection: tuple[list[str], dict[str, str]]
) -> None:
    run_native(["pgbench", "-i", *connection[0]], connection[1])
    side_by_side([arg.format(a=scripts[0], z=scripts[1]) for arg in args], connection)


def test_per_statement_figures_count_every_command_of_every_transaction(
    scripts: tuple[str, str], connection: tuple[list[str], dict[str, str]], tmp_path: Path
) -> None:
    conn, env = connection
    run_native(["pgbench", "-i", *conn], env)
    out = tmp_path / "run.json"
    argv = [
        "pgbench",
        "-f",
        f"{scripts[0]}@2",
        "-f",
        scripts[1],
        "-D",
        "offset=1",
        "-t",
        "30",
        "-c",
        "2",
        "-r",
    ]
    ours = run_mirror([*argv, "-n", "--json", str(out), *conn], env)
    assert ours.code == 0, ours.err
    extra = ResultDocument.parse(out.read_text()).extra
    assert sum(s["transactions"] for s in extra["scripts"]) == 60
    for script in extra["scripts"]:
        assert script["transactions"] > 0, extra["scripts"]
        assert [s["executions"] for s in script["statements"]] == [script["transactions"]] * len(
            script["statements"]
        )
        sql = [s["latency_average_ms"] for s in script["statements"] if not s["command"].startswith("\\")]
        assert all(ms > 0 for ms in sql)
