"""Slack from a local run: the webhook URL from an environment variable named in the spec.

The webhook URL is a secret: it comes from an environment variable named in the spec (or, on AWS,
from Secrets Manager, passed in by the caller: benchwright.notifiers.slack.aws) and is never logged,
stored or put in an error message. slack_sdk logs the URL at debug level, so it gets a muted logger of
its own. A failed post raises NotifyFailed; the finish stage (benchwright.stages.finish) notes it on
the run, so a result is never lost to Slack being down.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from benchwright.errors import NotifyFailed
from benchwright.notifiers.slack.message import build_message
from benchwright.providers.base import Notifier
from benchwright.runs import RunRecord

log = logging.getLogger(__name__)
DEFAULT_WEBHOOK_ENV = "BENCHWRIGHT_SLACK_WEBHOOK"


def _muted_logger() -> logging.Logger:
    quiet = logging.getLogger("benchwright.notify.slack_sdk")
    quiet.propagate = False
    quiet.disabled = True  # slack_sdk would log the webhook URL (a secret) at debug level
    return quiet


def webhook_url(secret: str) -> str | None:
    """The webhook URL from a secret's text: ``{"webhook_url": "https://..."}`` (what docs/deploy.md tells
    an operator to store) or the bare URL. Empty, ``{}`` or a JSON object without the key: None (Slack
    not configured). Anything else raises NotifyFailed without repeating the value (it is a secret)."""
    text = secret.strip()
    if not text or text == "{}":
        return None
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            raise NotifyFailed("slack: the webhook secret is not valid JSON") from None
        url = value.get("webhook_url") if isinstance(value, dict) else None
        if url in (None, ""):
            return None
        text = str(url).strip()
    if not text.startswith(("https://", "http://")):
        raise NotifyFailed('slack: the webhook secret holds no http(s) URL (expected {"webhook_url": ...})')
    return text


class SlackNotifier(Notifier):
    """Posts one Block Kit message per run to an incoming webhook (slack_sdk's WebhookClient)."""

    def __init__(
        self,
        webhook_url: str | None = None,
        env_var: str = DEFAULT_WEBHOOK_ENV,
        timeout_s: int = 10,
    ) -> None:
        self._url = webhook_url
        self.env_var = env_var
        self.timeout_s = timeout_s

    def __repr__(self) -> str:  # never show the URL
        return f"SlackNotifier(env_var={self.env_var!r})"

    def _webhook(self) -> str:
        raw = self._url if self._url is not None else os.environ.get(self.env_var, "")
        if not raw:
            raise NotifyFailed(f"slack: no webhook URL (environment variable {self.env_var} is not set)")
        url = webhook_url(raw)
        if url is None:
            raise NotifyFailed(f"slack: the webhook in {self.env_var} holds no URL")
        return url

    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool:
        send(self._webhook(), build_message(record, report_url, site_url), self.timeout_s)
        log.info("posted run %s to Slack", record.run_id)
        return True

    def post(self, message: dict[str, Any]) -> bool:
        """Post a message built elsewhere (the morning digest: benchwright.site.digest)."""
        send(self._webhook(), message, self.timeout_s)
        log.info("posted %s to Slack", str(message.get("text", ""))[:80])
        return True


def send(url: str, message: dict[str, Any], timeout_s: int = 10) -> None:
    """POST one message; NotifyFailed (never naming the URL) unless Slack answers 200."""
    from slack_sdk.webhook import WebhookClient

    client = WebhookClient(url, timeout=timeout_s, logger=_muted_logger())
    try:
        response = client.send(
            text=message["text"], blocks=message["blocks"], attachments=message.get("attachments")
        )
    except Exception as exc:  # connection refused, DNS, TLS, timeout: all "Slack unreachable"
        raise NotifyFailed(f"slack: webhook unreachable ({type(exc).__name__})") from None
    if response.status_code != 200:
        body = (response.body or "")[:120].replace("\n", " ")
        raise NotifyFailed(f"slack: webhook answered HTTP {response.status_code} ({body})")
