"""The run's Slack message lives with the Slack notifier (benchwright.notifiers.slack.message); these
names stay importable from here for the reports, the digest and existing callers."""

from __future__ import annotations

from benchwright.notifiers.slack.message import (
    MAX_CELLS,
    MAX_FLAGS,
    SECTION_LIMIT,
    STATUS_COLOUR,
    STATUS_EMOJI,
    VERDICT_EMOJI,
    _cut,
    build_message,
    grouped_flags,
    headline_rows,
    link_block,
)

__all__ = [
    "MAX_CELLS",
    "MAX_FLAGS",
    "SECTION_LIMIT",
    "STATUS_COLOUR",
    "STATUS_EMOJI",
    "VERDICT_EMOJI",
    "_cut",
    "build_message",
    "grouped_flags",
    "headline_rows",
    "link_block",
]
