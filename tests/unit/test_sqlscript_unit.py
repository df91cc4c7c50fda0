"""The SQL script parser and substitutions without a database: statement splitting that respects
quotes and comments, values bound as parameters, and errors that name the file and line."""

from __future__ import annotations

import random
import uuid

import pytest

from benchwright.errors import SpecError
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.sqlscript.workload import (
    SqlScriptWorkload,
    compile_script,
    split_statements,
)


def test_statements_split_on_semicolons_outside_quotes_and_comments() -> None:
    text = "-- header; not a statement\nINSERT INTO t VALUES ('a;b');\n\n  SELECT 1 -- trailing; comment\n;UPDATE t SET x = 1"
    assert split_statements(text) == [
        (2, "INSERT INTO t VALUES ('a;b')"),
        (4, "SELECT 1"),
        (5, "UPDATE t SET x = 1"),
    ]


def test_substitutions_become_bound_parameters_with_fresh_values() -> None:
    [(sql, makers)] = compile_script(
        "insert into t values({{uuid}}, {{ int:5:7 }}, {{string:10}}, '50%')", "f.sql"
    )
    assert sql == "insert into t values(%s, %s, %s, '50%%')"  # literal % escaped because parameters follow
    rnd = random.Random(3)
    values = [[m(rnd) for m in makers] for _ in range(200)]
    assert all(uuid.UUID(v[0]).version == 4 for v in values)
    assert {v[1] for v in values} == {5, 6, 7}
    assert all(len(v[2]) == 10 and v[2].isalnum() for v in values)
    assert len({v[0] for v in values}) == 200
    [(plain, none)] = compile_script("select '100%'", "f.sql")
    assert plain == "select '100%'" and none == []  # no parameters: the text is sent as it is


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("select 1;\nselect {{float:1}}", "f.sql:2"),
        ("select {{int:9:1}}", "LOW is greater than HIGH"),
        ("select {{int:a:b}}", "must be integers"),
        ("-- only a comment\n", "no statements"),
    ],
    ids=["unknown-kind-names-line", "reversed-range", "non-integer", "empty"],
)
def test_bad_scripts_are_refused_with_file_and_line(text: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        compile_script(text, "f.sql")
    assert message in str(err.value)


def test_a_script_is_required_and_runs_on_the_null_driver() -> None:
    with pytest.raises(SpecError) as err:
        SqlScriptWorkload({})
    assert err.value.field == "sql.file"
    props = {"sql.script": "insert into t values({{int:1:3}}); select 1;"}
    doc = run_phase(
        PhaseConfig(
            workload="sql",
            phase="run",
            engine="null",
            properties=props,
            threads=2,
            processes=1,
            operation_count=30,
        )
    )
    assert doc.operations["script"].statuses == {"OK": 30} and doc.extra["statements"] == 60
