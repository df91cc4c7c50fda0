"""Slack's descriptor: the registry's one line points here (benchwright.notifiers.registry.BUILTIN).

The senders import their modules when called, so reading a spec never imports slack_sdk or boto3.
"""

from __future__ import annotations

from typing import Any

from benchwright.notifiers.base import NotifierKind
from benchwright.notifiers.slack.spec import SLACK_SECRET_NAME, SlackSpec
from benchwright.providers.base import Notifier


def _local(section: SlackSpec) -> Notifier | None:
    """A webhook environment variable; a Secrets Manager webhook is an AWS-side setting (locally: silent)."""
    if not section.webhook_env:
        return None
    from benchwright.notifiers.slack.send import SlackNotifier

    return SlackNotifier(env_var=section.webhook_env)


def _cloud(section: SlackSpec | None, clients: Any, deployment_secret: str | None) -> Notifier | None:
    """The spec's own secret, else the deployment's (the stack's SlackWebhook secret), else none."""
    arn = (section.webhook_secret_arn if section is not None else None) or deployment_secret
    if not arn:
        return None
    from benchwright.notifiers.slack.aws import SecretsSlackNotifier

    return SecretsSlackNotifier(clients, arn)


KIND = NotifierKind(
    name="slack",
    spec=SlackSpec,
    local=_local,
    cloud=_cloud,
    secret_name=SLACK_SECRET_NAME,
    secret_arn_field="webhook_secret_arn",
    uses_deployment_secret=True,
)
