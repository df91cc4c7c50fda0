"""Notifiers for local runs: Slack through an incoming webhook, and the terminal.

The webhook URL is a secret: it comes from an environment variable named in the spec (or, on AWS,
from Secrets Manager, passed in by the caller) and is never logged, stored or put in an error
message. slack_sdk logs the URL at debug level, so it gets a muted logger of its own. A failed post
raises NotifyFailed; ``deliver`` turns that into a note on the run so a result is never lost to
Slack being down.
"""

from __future__ import annotations

import logging
import os

from rich.console import Console

from benchwright.errors import NotifyFailed
from benchwright.providers.base import Notifier, ResultStore
from benchwright.report.slack import build_message
from benchwright.report.text import print_summary
from benchwright.runs import RunRecord

log = logging.getLogger(__name__)
DEFAULT_WEBHOOK_ENV = "BENCHWRIGHT_SLACK_WEBHOOK"


def _muted_logger() -> logging.Logger:
    quiet = logging.getLogger("benchwright.notify.slack_sdk")
    quiet.propagate = False
    quiet.disabled = True  # slack_sdk would log the webhook URL (a secret) at debug level
    return quiet


class SlackNotifier(Notifier):
    """Posts one Block Kit message per run to an incoming webhook."""

    def __init__(
        self,
        webhook_url: str | None = None,
        env_var: str = DEFAULT_WEBHOOK_ENV,
        timeout_s: int = 10,
        report_location: str | None = None,
    ) -> None:
        self._url = webhook_url
        self.env_var = env_var
        self.timeout_s = timeout_s
        self.report_location = report_location

    def __repr__(self) -> str:  # never show the URL
        return f"SlackNotifier(env_var={self.env_var!r})"

    def _webhook(self) -> str:
        url = self._url or os.environ.get(self.env_var, "")
        if not url:
            raise NotifyFailed(f"slack: no webhook URL (environment variable {self.env_var} is not set)")
        if not url.startswith(("https://", "http://")):
            raise NotifyFailed(f"slack: the webhook in {self.env_var} is not an http(s) URL")
        return url

    def notify(self, record: RunRecord) -> None:
        from slack_sdk.webhook import WebhookClient

        client = WebhookClient(self._webhook(), timeout=self.timeout_s, logger=_muted_logger())
        message = build_message(record, self.report_location)
        try:
            response = client.send(text=message["text"], blocks=message["blocks"])
        except Exception as exc:  # connection refused, DNS, TLS, timeout: all "Slack unreachable"
            raise NotifyFailed(f"slack: webhook unreachable ({type(exc).__name__})") from None
        if response.status_code != 200:
            body = (response.body or "")[:120].replace("\n", " ")
            raise NotifyFailed(f"slack: webhook answered HTTP {response.status_code} ({body})")
        log.info("posted run %s to Slack", record.run_id)


class ConsoleNotifier(Notifier):
    """Prints the run summary to the terminal (the local default)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console

    def notify(self, record: RunRecord) -> None:
        print_summary(record, self.console)


class MultiNotifier(Notifier):
    """Several notifiers; every one is tried, and the failures are reported together."""

    def __init__(self, *notifiers: Notifier) -> None:
        self.notifiers = list(notifiers)

    def notify(self, record: RunRecord) -> None:
        failures = []
        for notifier in self.notifiers:
            try:
                notifier.notify(record)
            except NotifyFailed as exc:
                failures.append(str(exc))
        if failures:
            raise NotifyFailed("; ".join(failures))


def deliver(notifier: Notifier, record: RunRecord, store: ResultStore | None = None) -> str | None:
    """Notify, and on NotifyFailed note it on the run (``environment["notification"]``), re-save the
    run when a store is given, and return the message. The run itself is never at risk."""
    try:
        notifier.notify(record)
    except NotifyFailed as exc:
        log.warning("run %s: notification failed: %s", record.run_id, exc)
        record.environment["notification"] = f"failed: {exc}"
        if store is not None:
            store.save_run(record)
        return str(exc)
    record.environment["notification"] = "sent"
    if store is not None:
        store.save_run(record)
    return None
