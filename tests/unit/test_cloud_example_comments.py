"""The AWS examples' comments say how to read their results: `benchwright pull --spec NAME` then
`benchwright table NAME ...`; NAME must be what the views resolve (the suite's name for a suite of
several benchmarks, whose runs carry it as the ``suite`` tag; the spec's name otherwise)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from benchwright.cli import build_parser
from benchwright.spec import load_suite

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.aws.yaml"))


def commands(path: Path) -> list[list[str]]:
    lines = [
        m.group(1) for m in re.finditer(r"^#\s+(benchwright \S+ .*?)(?:\s{3,}\(.*)?$", path.read_text(), re.M)
    ]
    return [shlex.split(line)[1:] for line in lines]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_pull_then_table_names_what_the_views_resolve(path: Path) -> None:
    suite = load_suite(path)
    name = suite.suite if len(suite.benchmarks) > 1 else suite.benchmarks[0].name
    argvs = commands(path)
    pulls = [a for a in argvs if a[0] == "pull"]
    tables = [a for a in argvs if a[0] == "table"]
    assert pulls and tables, f"{path.name}: no pull / table commands in the comments"
    assert all(a[a.index("--spec") + 1] == name for a in pulls)
    assert all(a[1] == name for a in tables), [a[1] for a in tables]
    for argv in pulls + tables:  # every option exists as written
        build_parser(argv[0]).parse_args(argv)
