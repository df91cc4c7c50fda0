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


@pytest.mark.parametrize("name", ["exp2-elasticache-ycsb", "exp3-rds-mysql-storage", "exp4-ardb-ec2"])
def test_the_estimate_in_the_comment_is_what_validate_says_today(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The comment's time and cost are `benchwright validate --prices tests/data/pricing`'s figures,
    so a change to the estimator or the price excerpt shows up here, not in a reader's bill."""
    from benchwright.cli import main

    path = next(p for p in EXAMPLES if p.stem.startswith(name))
    said = re.search(r"^# \d{4}-\d\d-\d\d\): (\d+) cells in ([^,]+), ([\d.]+) USD", path.read_text(), re.M)
    assert said, f"{path.name}: no 'N cells in T, X USD' estimate in the comments"
    cells, duration, usd = said.groups()
    root = Path(__file__).resolve().parents[2]
    assert main(["validate", str(path), "--prices", str(root / "tests" / "data" / "pricing")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the console may wrap long lines
    assert f"estimated {duration}" in out or f"estimated duration: {duration}" in out, duration
    assert f"estimated cost {usd} USD" in out or f"estimated cost: {usd} USD" in out, usd
    from benchwright.spec.matrix import expand_matrix

    assert sum(len(expand_matrix(b)) for b in load_suite(path).benchmarks) == int(cells)
