"""Every YAML block of the experiment pages in docs/ is a spec that validates as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from benchwright.spec import parse_suite

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("experiments-*.md"))
BLOCKS = [
    pytest.param(block, id=f"{page.stem}:{n}")
    for page in PAGES
    for n, block in enumerate(re.findall(r"```yaml\n(.*?)```", page.read_text(), re.S))
]


def test_there_is_a_page_per_experiment_type() -> None:
    names = {p.stem for p in PAGES}
    assert names >= {
        "experiments-events", "experiments-operations", "experiments-server-stats", "experiments-budget-preflight",
    }  # fmt: skip
    assert len(BLOCKS) >= len(PAGES)


@pytest.mark.parametrize("block", BLOCKS)
def test_every_example_spec_validates(block: str) -> None:
    suite = parse_suite(yaml.safe_load(block))
    assert suite.benchmarks
