"""Judgement: validity flags on results, confidence intervals over repeats, verdicts against history."""

from benchwright.judge.compare import compare_runs, compare_with_history, repeat_summary
from benchwright.judge.validity import ValidityPolicy, judge_cell, judge_document, judge_run

__all__ = [
    "ValidityPolicy",
    "compare_runs",
    "compare_with_history",
    "judge_cell",
    "judge_document",
    "judge_run",
    "repeat_summary",
]
