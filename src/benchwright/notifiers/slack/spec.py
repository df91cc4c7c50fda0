"""``notify.slack``: where the webhook URL is kept (an env var or a Secrets Manager ARN), never the URL.

A cloud spec's own Slack secret (``webhook_secret_arn``) is named ``benchwright/slack`` or
``benchwright/slack/<name>``: the stack lets its notifying Lambdas read exactly those secrets
(infra/permissions.py) and validation refuses any other name for a cloud run (spec/model.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from benchwright.spec._base import ENV_NAME_RE, SECRET_ARN_RE, StrictModel

SLACK_SECRET_NAME = "benchwright/slack"


class SlackSpec(StrictModel):
    webhook_env: str | None = None  # environment variable holding the webhook URL
    webhook_secret_arn: str | None = None  # Secrets Manager secret holding it
    channel: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_url(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if isinstance(value, str) and value.startswith(("http://", "https://")):
                    raise ValueError(
                        f"{key}: never put the webhook URL in the spec; name an environment variable "
                        "(webhook_env) or a Secrets Manager ARN (webhook_secret_arn)"
                    )
        return data

    @model_validator(mode="after")
    def _one(self) -> SlackSpec:
        if (self.webhook_env is None) == (self.webhook_secret_arn is None):
            raise ValueError("set exactly one of webhook_env and webhook_secret_arn")
        if self.webhook_env is not None and not ENV_NAME_RE.match(self.webhook_env):
            raise ValueError("webhook_env must be an environment variable NAME (A-Z, 0-9, _)")
        if self.webhook_secret_arn is not None and not SECRET_ARN_RE.match(self.webhook_secret_arn):
            raise ValueError("webhook_secret_arn must be a Secrets Manager secret ARN")
        return self
