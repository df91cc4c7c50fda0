"""Every YAML block in docs/ and the README parses as written (the strict loader a spec file goes
through), and a block that is a spec, a suite or a spec section validates: the copy a reader pastes works.

Blocks that elide with ``{...}`` or list benchmarks by name only are outlines, not specs: they must still parse as YAML."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from benchwright.spec import parse_spec, parse_suite
from benchwright.yamlload import loads

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
BLOCK = re.compile(r"```ya?ml\n(.*?)```", re.S)
SECTIONS = {"target", "runner", "workload", "matrix", "repeats", "validity", "notify", "tags"}
BASE: dict[str, Any] = {
    "name": "doc-block",
    "target": {"provider": "local", "engine": "postgres"},
    "workload": {"name": "ycsb", "files": ["workloada"], "properties": {"recordcount": 1000}},
}


def blocks() -> list[tuple[str, str]]:
    out = []
    for path in DOCS:
        for i, match in enumerate(BLOCK.finditer(path.read_text())):
            out.append((f"{path.relative_to(ROOT)}#{i + 1}", match.group(1)))
    return out


def test_the_docs_have_yaml_blocks() -> None:
    assert len(blocks()) >= 10


@pytest.mark.parametrize(("where", "text"), blocks(), ids=[w for w, _ in blocks()])
def test_every_yaml_block_parses_and_validates_as_written(where: str, text: str) -> None:
    data = loads(text, where)  # strict: duplicate keys, YAML 1.1 booleans (`on:`) ...
    assert data is not None, f"{where}: empty block"
    if (
        "{...}" in text
        or not isinstance(data, dict)
        or (
            set(data) == {"suite", "benchmarks"}
            and not all(isinstance(b, dict) and "target" in b for b in data["benchmarks"])
        )
    ):
        return  # an outline
    if "suite" in data:
        parse_suite(data)
    elif {"name", "target", "workload"} <= set(data):
        parse_spec(data)
    elif set(data) <= SECTIONS:
        spec = copy.deepcopy(BASE)
        if "target.storage" in str(data):  # a storage axis needs a target that has storage
            spec["target"] = {"provider": "rds", "engine": "postgres", "engine_version": "16.4", "instance_class": "db.m6i.large",
                              "storage": {"type": "gp3", "size_gb": 100}}  # fmt: skip
            spec["runner"] = {"platform": "fargate"}
        for key, value in data.items():
            if key == "workload" and "name" not in value:
                spec["workload"] = {**spec["workload"], **value}
            else:
                spec[key] = value
        parse_spec(spec)
