"""`benchwright pgbench` and `benchwright tpcb` take pgbench's command line strictly: a flag they do
not know or implement is an error naming it, exit 1, before anything connects (never help, exit 0)."""

from __future__ import annotations

import pytest

from benchwright.cli import main
from benchwright.commands.pgbench import postgres_url
from benchwright.errors import SpecError
from benchwright.runner.workloads.tpcb.workload import init_steps

# port 1 on 127.0.0.1: nothing listens, so a command that got as far as connecting would fail there
NOWHERE = ["-h", "127.0.0.1", "-p", "1", "-U", "nobody", "nodb"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["tpcb", "-i", "-h", "127.0.0.1"], "-i -h"),
        (["tpcb", "run", "-r", "--url", "postgresql://u@127.0.0.1:1/x"], "-r"),
        (["pgbench", "-Z", *NOWHERE], "-Z"),
        (["pgbench", "--no-such-flag=3", *NOWHERE], "--no-such-flag=3"),
        (["pgbench", "-f", "no-such-script.sql", *NOWHERE], "-f no-such-script.sql: cannot read"),
        (["pgbench", "-f", "/dev/null", *NOWHERE], "must be a regular file"),
        (["pgbench", "-i", "-f", "x.sql", *NOWHERE], "-f: cannot be used in initialization"),
        (["pgbench", "-i", "-r", *NOWHERE], "--report-per-command: cannot be used in initialization"),
        (["pgbench", "-D", "novalue", *NOWHERE], "-D novalue: invalid variable definition"),
        (["pgbench", "-C", *NOWHERE], "-C/--connect"),
        (["pgbench", "-i", "-c", "3", *NOWHERE], "--client"),
        (["pgbench", "-F", "90", *NOWHERE], "--fillfactor"),
        (["pgbench", "-T", "1", "-t", "1", *NOWHERE], "-T and -t"),
        (["pgbench", "-R", "10", "-L", "5", *NOWHERE], "-L with -R"),
        (["pgbench", "-i", "-I", "dtGvp", *NOWHERE], "-I dtGvp"),
        (["pgbench", "-b", "tpcb-like@-2", *NOWHERE], "invalid weight -2"),
        (["pgbench", "-b", "tpcb-like@0", *NOWHERE], "total script weight must not be zero"),
        (["pgbench", "-b", "s", *NOWHERE], "ambiguous"),
        (["pgbench", "-p", "x5432", "nodb"], "invalid port"),
    ],
)
def test_a_flag_not_understood_is_refused_by_name_with_exit_1(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(argv)
    streams = capsys.readouterr()
    assert code == 1, streams.err
    assert named in streams.err
    assert streams.out == ""  # no help text, no summary


def test_help_is_double_dash_only_and_lists_pgbench_s_connection_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["pgbench", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "-h HOSTNAME, --host HOSTNAME" in text and "-U USERNAME" in text and "dbname" in text


def test_version_answers_like_pgbench(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pgbench", "-V"]) == 0
    assert capsys.readouterr().out.startswith("pgbench (benchwright ")


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ((None, None, None, None), "postgresql:///"),
        (("127.0.0.1", "15432", "bench", "db"), "postgresql://bench@127.0.0.1:15432/db"),
        (("/var/run/postgresql", None, None, "db"), "postgresql:///db?host=%2Fvar%2Frun%2Fpostgresql"),
        (("::1", "5432", "a b", None), "postgresql://a%20b@::1:5432/"),
    ],
)
def test_connection_flags_become_a_libpq_url(
    given: tuple[str | None, str | None, str | None, str | None], url: str
) -> None:
    assert postgres_url(*given) == url


@pytest.mark.parametrize(
    ("steps", "error"),
    [
        ("dtgvp", None),
        ("dtgvpf", None),
        ("dt", None),
        ("gvp", None),
        ("vtp", "d and t must come first"),
        ("dtgx", "unknown step"),
        ("dtgg", "twice"),
    ],
)
def test_init_steps_are_checked_as_pgbench_reads_them(steps: str, error: str | None) -> None:
    if error is None:
        assert init_steps(steps) == steps
        return
    with pytest.raises(SpecError) as err:
        init_steps(steps)
    assert err.value.field == "tpcb.init_steps" and error in err.value.detail
