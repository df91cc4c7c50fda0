"""`benchwright sysbench` takes sysbench's command line strictly: an option it does not know or
implement, a test it does not run or a missing command is an error naming it, exit 1, before
anything connects."""

from __future__ import annotations

import argparse

import pytest

from benchwright.cli import main
from benchwright.commands.sysbench import parser, url_of, words

NOWHERE = ["--mysql-host=127.0.0.1", "--mysql-port=1"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["oltp_read_write", "--nosuch=1", "run", *NOWHERE], "--nosuch=1"),
        (["oltp_read_write", "--warmup-time=5", "run", *NOWHERE], "--warmup-time"),
        (["oltp_insert", "run", *NOWHERE], "'oltp_insert' is not implemented"),
        (["oltp_read_write", *NOWHERE], "expected TESTNAME and one of prepare, run, cleanup"),
        (["oltp_read_write", "prewarm", *NOWHERE], "unknown command 'prewarm'"),
        (
            ["oltp_read_write", "run", "--pgsql-port=5432", *NOWHERE],
            "--pgsql-port: given with --db-driver=mysql",
        ),
        (["oltp_read_write", "run", "--mysql-port=x"], "--mysql-port: expected a number"),
        (["oltp_read_write", "run", "--skip-trx=maybe", *NOWHERE], "--skip-trx"),
        (["oltp_read_write", "run", "--db-driver=oracle"], "--db-driver"),
    ],
)
def test_what_sysbench_would_refuse_is_refused_by_name_with_exit_1(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sysbench", *argv])
    streams = capsys.readouterr()
    assert code == 1, streams.err
    assert named in streams.err
    assert streams.out == ""


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["oltp_read_write", "run"], ("read_write", "run")),
        (["prepare", "oltp_point_select"], ("point_select", "prepare")),
        (["/usr/share/sysbench/oltp_read_only.lua", "cleanup"], ("read_only", "cleanup")),
    ],
)
def test_the_test_name_and_command_are_read_as_sysbench_reads_them(
    given: list[str], expected: tuple[str, str]
) -> None:
    assert words(given) == expected


def test_a_bare_switch_does_not_swallow_the_command() -> None:
    from benchwright.commands.sysbench import _normalise

    opts = parser().parse_intermixed_args(_normalise(["--skip-trx", "oltp_write_only", "--histogram", "run"]))
    assert opts.skip_trx is True and opts.histogram is True
    assert opts.words == ["oltp_write_only", "run"]


@pytest.mark.parametrize(
    ("argv", "url"),
    [
        ([], "mysql://sbtest@localhost:3306/sbtest"),
        (["--db-driver=pgsql"], "postgresql://sbtest@localhost:5432/sbtest"),
        (
            [
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                "--pgsql-port=15432",
                "--pgsql-user=bench",
                "--pgsql-password=p@ss",
                "--pgsql-db=bench",
            ],
            "postgresql://bench:p%40ss@127.0.0.1:15432/bench",
        ),
    ],
)
def test_the_driver_options_become_a_url(argv: list[str], url: str) -> None:
    opts: argparse.Namespace = parser().parse_intermixed_args([*argv, "oltp_read_write", "run"])
    assert url_of(opts) == url
