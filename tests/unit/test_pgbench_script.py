"""pgbench scripts as `benchwright pgbench -f` reads them: the commands, pgbench's expression
arithmetic and random functions, :variable substitution, and the pooled figures of a script mix."""

from __future__ import annotations

import random
import statistics

import pytest

from benchwright.errors import SpecError
from benchwright.runner.workloads.pgscript import expr
from benchwright.runner.workloads.pgscript.report import pooled, statement_lines
from benchwright.runner.workloads.pgscript.script import BUILTIN_TEXT, parse_script
from benchwright.runner.workloads.pgscript.workload import _bound, _pasted


def value(text: str, env: dict[str, expr.Value | str] | None = None, seed: int = 1) -> expr.Value:
    return expr.parse(text, "t.sql:1")(env or {}, random.Random(seed))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7 / 2", 3),
        ("-7 / 2", -3),  # toward zero, as C
        ("-7 % 3", -1),  # the dividend's sign
        ("7 % -3", 1),
        ("7.0 / 2", 3.5),
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("- 2 * -3", 6),
        ("100000 * :scale", 300000),
        ("abs(-4) + greatest(1, 5, 2) + least(3, 2)", 11),
        ("int(2.9) + mod(10, 4)", 4),
        ("double(1) / 4", 0.25),
        ("pow(2, 10)", 1024.0),
        ("sqrt(16) + ln(exp(2))", 6.0),
        (":v + 1", 42),  # a -D value is text, read as a number
    ],
)
def test_expressions_follow_pgbench_s_arithmetic(text: str, expected: expr.Value) -> None:
    got = value(text, {"scale": 3, "v": "41"})
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1 / 0", "division by zero"),
        ("9223372036854775807 + 1", "bigint out of range"),
        (":missing", "undefined variable 'missing'"),
        ("random(5, 1)", "empty range"),
        ("random(1.5, 3)", "integer bounds"),
        ("random_gaussian(1, 10, 1.5)", "at least 2.0"),
        ("random_exponential(1, 10, 0)", "greater than zero"),
        ("random_zipfian(1, 10, 1.0)", "[1.001, 1000]"),
    ],
)
def test_an_expression_error_names_the_line(text: str, error: str) -> None:
    with pytest.raises(SpecError) as err:
        value(text)
    assert error in str(err.value) and "t.sql:1" in str(err.value)


@pytest.mark.parametrize(
    ("text", "named"),
    [("hash(1)", "'hash'"), ("1 < 2", "'<'"), ("nosuch(1)", "'nosuch'"), ("random(1)", "takes 2")],
)
def test_what_the_mirror_does_not_implement_is_refused_when_read(text: str, named: str) -> None:
    with pytest.raises(SpecError) as err:
        expr.parse(text, "t.sql:4")
    assert named in str(err.value) and "t.sql:4" in str(err.value)


def draws(text: str, n: int = 4000) -> list[int]:
    node = expr.parse(text, "t")
    rng = random.Random(7)
    return [int(node({}, rng)) for _ in range(n)]


def test_random_functions_stay_in_range_with_their_shapes() -> None:
    uniform = draws("random(1, 10)")
    assert set(uniform) == set(range(1, 11))
    gaussian = draws("random_gaussian(1, 100, 2.5)")
    assert min(gaussian) >= 1 and max(gaussian) <= 100
    assert 45 < statistics.mean(gaussian) < 56  # centred
    assert sum(40 <= g <= 61 for g in gaussian) > 0.33 * len(gaussian)  # about 39%; flat: 22%
    exponential = draws("random_exponential(1, 100, 5)")
    assert min(exponential) >= 1 and max(exponential) <= 100
    assert sum(e <= 20 for e in exponential) > 0.55 * len(exponential)  # 1 - e^-1 = 63% expected
    zipf = draws("random_zipfian(1, 1000, 1.5)")
    assert min(zipf) >= 1 and max(zipf) <= 1000
    counts = [zipf.count(k) for k in (1, 2, 3)]
    assert counts[0] > counts[1] > counts[2] > 0  # rank 1 the most frequent


def test_a_script_reads_into_pgbench_s_commands() -> None:
    text = (
        "-- a comment; with a semicolon\n"
        "\\set aid random(1, \\\n 100000 * :scale)\n"
        "SELECT abalance FROM pgbench_accounts\n  WHERE aid = :aid;\n"
        "\\sleep 2 ms\n"
        "SELECT ';' AS semi, :aid::int; SELECT 2;\n"
    )
    script = parse_script(text, "a.sql", 3)
    assert [c.kind for c in script.commands] == ["set", "sql", "sleep", "sql", "sql"]
    # -r shows a statement's first line (with its ';' when it has one line only), a meta-command whole
    assert [c.shown for c in script.commands] == [
        "\\set aid random(1,   100000 * :scale)",
        "SELECT abalance FROM pgbench_accounts",
        "\\sleep 2 ms",
        "SELECT ';' AS semi, :aid::int;",
        "SELECT 2;",
    ]
    assert script.commands[0].names == ("aid",) and script.commands[2].unit_s == 1e-3
    assert script.commands[3].names == ("aid",)  # `::int` is a cast, not a variable
    assert script.weight == 3


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "no commands"),
        ("-- only a comment\n", "no commands"),
        ("\\shell ls\n", "\\shell is not implemented"),
        ("\\sleep 1 minute\n", "unknown time unit"),
        ("\\set 9x 1\n", "invalid variable name"),
    ],
)
def test_a_script_the_mirror_cannot_run_is_refused(text: str, error: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_script(text, "b.sql")
    assert error in str(err.value)


def test_the_built_in_scripts_read_as_pgbench_documents_them() -> None:
    assert [len(parse_script(t, n).commands) for n, t in BUILTIN_TEXT.items()] == [11, 9, 2]


def test_variables_are_pasted_in_simple_mode_and_bound_otherwise() -> None:
    env: dict[str, expr.Value | str] = {"aid": 7, "f": 0.5}
    sql = "SELECT :aid, :f, :nope, x::int, '100%' FROM t WHERE a = :aid"
    assert _pasted(sql, env) == "SELECT 7, 0.5, :nope, x::int, '100%' FROM t WHERE a = 7"
    assert _bound(sql, env) == ("SELECT %s, %s, :nope, x::int, '100%%' FROM t WHERE a = %s", [7, 0.5, 7])
    assert _bound("SELECT 1", env) == ("SELECT 1", [])


def test_pooled_figures_are_those_of_every_transaction() -> None:
    a, b = [1.0, 2.0, 3.0], [10.0, 14.0]
    scripts = [
        {
            "transactions": len(s),
            "latency_average_ms": statistics.mean(s),
            "latency_stddev_ms": statistics.pstdev(s),
        }
        for s in (a, b)
    ]
    mean, sd = pooled(scripts)
    assert mean == pytest.approx(statistics.mean(a + b))
    assert sd == pytest.approx(statistics.pstdev(a + b))
    assert pooled([]) == (0.0, 0.0)


def test_statement_lines_are_laid_out_as_pgbench_s() -> None:
    script = {"statements": [{"command": "SELECT 1;", "latency_average_ms": 0.1234, "failures": 2}]}
    assert statement_lines(script, " - ") == [
        " - statement latencies in milliseconds and failures:",
        "         0.123           2  SELECT 1;",
    ]
    assert statement_lines({"statements": []}, "") == []
