"""Slack from AWS: the webhook comes from Secrets Manager, the message is the local one (message.py).

The secret holds ``{"webhook_url": "https://hooks.slack.com/..."}`` (docs/deploy.md) or the bare URL;
the stack creates it as ``{}``, which means "no Slack" (nothing is sent and the run notes it).
"""

from __future__ import annotations

from typing import Any

from benchwright.errors import NotifyFailed
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.secrets import secret_value
from benchwright.providers.base import Notifier
from benchwright.runs import RunRecord


class SecretsSlackNotifier(Notifier):
    """Reads the webhook at send time (never at import, never logged) and delegates the post."""

    def __init__(self, clients: Clients, secret_arn: str) -> None:
        self.clients = clients
        self.secret_arn = secret_arn

    def __repr__(self) -> str:
        return f"SecretsSlackNotifier(secret_arn={self.secret_arn!r})"

    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool:
        from benchwright.notifiers.slack.send import SlackNotifier, webhook_url

        url = webhook_url(secret_value(self.clients, self.secret_arn, fatal=NotifyFailed))
        if url is None:
            return False
        return SlackNotifier(webhook_url=url).notify(record, report_url, site_url=site_url)

    def post(self, message: dict[str, Any]) -> bool:
        """Post a message built elsewhere (the suite's morning digest: stages/finish_digest.py)."""
        from benchwright.notifiers.slack.send import SlackNotifier, webhook_url

        url = webhook_url(secret_value(self.clients, self.secret_arn, fatal=NotifyFailed))
        if url is None:
            return False
        return SlackNotifier(webhook_url=url).post(message)
