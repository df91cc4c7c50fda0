"""Every seed has a local example, and each local example is run by tests/e2e/test_seed_tables.py
(shortened), which also checks the table it reproduces."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
LOCAL_EXAMPLES = sorted((ROOT / "examples").glob("*.local.yaml"))


def test_there_is_a_local_example_per_seed_experiment() -> None:
    assert {p.name.split("-")[0] for p in LOCAL_EXAMPLES} == {"exp1", "exp2", "exp3", "exp4", "exp5"}


def test_every_local_example_has_a_seed_table_test() -> None:
    """tests/e2e/test_seed_tables.py runs every local example (shortened) and checks its table."""
    text = (ROOT / "tests" / "e2e" / "test_seed_tables.py").read_text()
    missing = [p.name for p in LOCAL_EXAMPLES if p.name not in text]
    assert not missing, missing
