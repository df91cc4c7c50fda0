"""``make bench``'s pairs (benchmarks/summary.py): repetitions alternate their order, and a pair's
ratio is the median of its repetitions' own ratios."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SUMMARY = Path(__file__).resolve().parents[2] / "benchmarks" / "summary.py"


def load_summary() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_summary", SUMMARY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_repetitions_alternate_which_side_runs_first() -> None:
    summary = load_summary()
    order: list[str] = []
    ours, tools = summary.alternated(
        lambda: order.append("ours") or len(order), lambda: order.append("tool") or len(order), 4
    )
    assert order == ["ours", "tool", "tool", "ours", "ours", "tool", "tool", "ours"]
    assert ours == [1, 4, 5, 8] and tools == [2, 3, 6, 7]


def test_a_pair_is_the_median_of_its_repetitions_ratios_with_their_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = load_summary()
    out = tmp_path / "figures.jsonl"
    monkeypatch.setenv("BENCH_SUMMARY", str(out))
    # the host slows down in the third repetition: both sides alike, the ratio holds
    ours = [(100.0, 10.0), (90.0, 12.0), (50.0, 22.0)]
    tool = [(110.0, 8.0), (100.0, 10.0), (55.0, 20.0)]
    tput, cpu = summary.record_pairs("pair", ours, tool, "event loop, C")
    assert tput == pytest.approx(0.909, abs=1e-3)  # ratios 0.909, 0.9, 0.909
    assert cpu == pytest.approx(1.2)  # ratios 1.25, 1.2, 1.1
    line = json.loads(out.read_text())
    assert line["throughput_range"] == [0.9, 0.909] and line["cpu_range"] == [1.1, 1.25]
    assert line["repetitions"] == 3
    table = "\n".join(summary.table(out))
    assert "3: 0.90-0.91 / 1.10-1.25" in table and "off target" not in table


def test_a_repetition_in_which_the_tool_measured_nothing_is_an_error_not_a_ratio() -> None:
    summary = load_summary()
    with pytest.raises(ValueError, match="pair"):
        summary.record_pairs("pair", [(100.0, 10.0)], [(0.0, 8.0)])
