"""The ``validity`` and ``notify`` sections: the judge's thresholds and who hears about the run.

A webhook URL is a secret: the spec names where it is kept (an env var or a Secrets Manager ARN),
never the URL itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from benchwright.judge.validity import ValidityPolicy as JudgePolicy
from benchwright.spec._base import ENV_NAME_RE, SECRET_ARN_RE, StrictModel

# A cloud spec's own Slack secret (notify.slack.webhook_secret_arn) is named ``benchwright/slack`` or
# ``benchwright/slack/<name>``: the stack lets its notifying Lambdas read exactly those secrets
# (infra/permissions.py) and validation refuses any other name for a cloud run (spec/model.py).
SLACK_SECRET_NAME = "benchwright/slack"


class ValidityPolicy(JudgePolicy):
    """The judge's thresholds (benchwright.judge.validity, where the defaults live) plus the verdict's."""

    min_effect: float = Field(default=0.05, gt=0, lt=1)  # smallest relative change a verdict calls a change
    # `benchwright run` exits 4 for a run that ended invalid; false: exit 0 for it (the status stays
    # "invalid" in the record, the report and the message: only the exit code is relaxed)
    fail_on_invalid: bool = True
    # a burst bucket the forecast sees draining during the run (benchwright.forecast): `validate`,
    # `run` and `submit` warn, or refuse the spec before anything is created
    credits: Literal["warn", "refuse"] = "warn"


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


class NotifySpec(StrictModel):
    """When the finish stage sends the run's message (benchwright.stages.finish.should_notify):
    always; success (the run succeeded); failure (failed, aborted or invalid); regression (slower
    than its history, or failed, aborted or invalid)."""

    slack: SlackSpec | None = None
    on: Literal["always", "success", "failure", "regression"] = "always"

    @model_validator(mode="before")
    @classmethod
    def _yaml_on(cls, data: Any) -> Any:
        """YAML 1.1 (PyYAML) reads a bare ``on:`` key as the boolean True: ``notify: {on: failure}``
        arrives as ``{True: "failure"}``. Map that key back to "on"."""
        if isinstance(data, dict) and True in data:
            data = dict(data)
            value = data.pop(True)
            if "on" in data:
                raise ValueError("'on' is given twice")
            data["on"] = value
        return data
