"""Notifiers for local runs: the terminal, and several notifiers at once.

Slack's sender lives with its kind (benchwright.notifiers.slack.send); its names stay importable from
here. A failed post raises NotifyFailed; the finish stage (benchwright.stages.finish) notes it on the
run, so a result is never lost to a notifier being down.
"""

from __future__ import annotations

from rich.console import Console

from benchwright.errors import NotifyFailed
from benchwright.notifiers.slack.send import DEFAULT_WEBHOOK_ENV, SlackNotifier, send, webhook_url
from benchwright.providers.base import Notifier
from benchwright.report.text import print_summary
from benchwright.runs import RunRecord

__all__ = [
    "DEFAULT_WEBHOOK_ENV",
    "ConsoleNotifier",
    "MultiNotifier",
    "SlackNotifier",
    "send",
    "webhook_url",
]


class ConsoleNotifier(Notifier):
    """Prints the run summary to the terminal."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console

    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool:
        print_summary(record, self.console)
        return True


class MultiNotifier(Notifier):
    """Several notifiers; every one is tried, and the failures are reported together."""

    def __init__(self, *notifiers: Notifier) -> None:
        self.notifiers = list(notifiers)

    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool:
        failures, sent = [], False
        for notifier in self.notifiers:
            try:
                sent = (
                    notifier.notify(record, report_url, site_url=site_url)
                    if site_url
                    else notifier.notify(record, report_url)
                ) or sent
            except NotifyFailed as exc:
                failures.append(str(exc))
        if failures:
            raise NotifyFailed("; ".join(failures))
        return sent
