"""Notifications from AWS: each registered notifier kind's AWS sender (benchwright.notifiers).

Slack's (the webhook from Secrets Manager) lives with its kind, benchwright.notifiers.slack.aws; the
name stays importable from here.
"""

from __future__ import annotations

from benchwright.notifiers.slack.aws import SecretsSlackNotifier
from benchwright.providers.aws.common import Clients
from benchwright.providers.base import Notifier
from benchwright.runs import RunRecord
from benchwright.spec import NotifySpec

__all__ = ["NoNotifier", "SecretsSlackNotifier", "notifier_for"]


class NoNotifier(Notifier):
    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool:
        return False


def notifier_for(notify: NotifySpec | None, clients: Clients, default_secret: str | None) -> Notifier:
    """Every kind's AWS sender for the spec's ``notify`` section: for Slack the spec's
    ``notify.slack.webhook_secret_arn``, else the deployment's secret (``default_secret``); none: no
    notifier. ``notify.on`` is the finish stage's to apply."""
    from benchwright.notifiers.registry import kinds

    sections = dict(notify.configured()) if notify is not None else {}
    found: list[Notifier] = []
    for name, kind in kinds().items():
        section = sections.get(name)
        if kind.cloud is None or (section is None and not kind.uses_deployment_secret):
            continue
        notifier = kind.cloud(section, clients, default_secret if kind.uses_deployment_secret else None)
        if notifier is not None:
            found.append(notifier)
    if not found:
        return NoNotifier()
    if len(found) == 1:
        return found[0]
    from benchwright.providers.local.notify import MultiNotifier

    return MultiNotifier(*found)
