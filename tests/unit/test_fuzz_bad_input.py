"""Issue 14: a fuzz test over specs and CLI arguments. Whatever comes in, the answer is a result or
one clear error: no traceback, no hang (a deadline per example), bounded memory.

Specs are the shipped examples with random mutations (values of every type, hostile strings, deep or
huge structures, deleted and invented keys); YAML text and CLI argument lists are generated too.
Derandomized so that CI runs the same examples every time; about a minute in all.
"""

from __future__ import annotations

import contextlib
import copy
import resource
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchwright.cli import main
from benchwright.errors import BenchwrightError
from benchwright.sharing import estimated_seconds as estimate_duration
from benchwright.spec import parse_suite
from benchwright.yamlload import loads

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPECS = [yaml.safe_load(p.read_text()) for p in sorted(EXAMPLES.glob("*.yaml"))]
FUZZ = settings(
    max_examples=250,
    deadline=timedelta(seconds=10),
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

HOSTILE = st.sampled_from(
    [
        "../../../tmp/x",
        "/proc/self/environ",
        "/dev/zero",
        "1gb\nbind 0.0.0.0",
        "postgresql://u:pw@h/db",
        "",
        "x" * 5000,
        "nan",
        "-1",
        "true",
        "on",
        "\x00",
        "workloada",
        "{{uuid}}",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    HOSTILE,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.one_of(st.text(max_size=12), HOSTILE), inner, max_size=5),
    ),
    max_leaves=40,
)


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def mutated_specs(draw: st.DrawFn) -> Any:
    data = copy.deepcopy(draw(st.sampled_from(SPECS)))
    for _ in range(draw(st.integers(1, 4))):
        candidates = paths(data)[1:]
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["set", "delete", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.one_of(st.text(max_size=12), HOSTILE))] = draw(VALUES)
        else:
            parent[path[-1]] = draw(VALUES)
    return data


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@FUZZ
@given(mutated_specs())
def test_mutated_specs_validate_or_fail_with_one_clear_error(data: Any) -> None:
    try:
        suite = parse_suite(data)
    except BenchwrightError as exc:
        assert str(exc) and "\n" not in str(exc).strip()[:1]
        return
    for spec in suite.benchmarks:
        assert estimate_duration(spec) >= 0


@FUZZ
@given(st.one_of(st.text(max_size=400), st.builds(lambda d: yaml.safe_dump(d), VALUES)))
def test_any_yaml_text_loads_or_fails_with_one_clear_error(text: str) -> None:
    try:
        data = loads(text, "fuzz.yaml")
    except BenchwrightError:
        return
    with contextlib.suppress(BenchwrightError):
        parse_suite(data)


ARG = st.one_of(
    HOSTILE,
    st.text(min_size=1, max_size=15).filter(lambda s: "\x00" not in s),
    st.sampled_from(
        ["--limit", "0", "-1", "--json", "--store", "--quick", "--max-cells", "--files-root", "x"]
    ),
)
COMMANDS = st.sampled_from(["validate", "show", "compare", "history", "report", "cleanup", "table"])


@FUZZ
@given(COMMANDS, st.lists(ARG, max_size=5))
def test_cli_arguments_never_raise_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, command: str, args: list[str]
) -> None:
    workdir = tmp_path_factory.mktemp("fuzz")
    store = workdir / "store.sqlite"
    argv = (
        [command, *args, "--store", str(store)]
        if command in ("show", "history", "report")
        else [command, *args]
    )
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        assert exc.code in (0, 2)
        return
    assert code in (0, 1, 2, 3)


def test_the_fuzzing_stayed_within_memory() -> None:
    """After the fuzz tests above (same process), the peak resident size is bounded."""
    assert rss_mb() < 1500
