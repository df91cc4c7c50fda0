"""The ``validity`` and ``notify`` sections: the judge's thresholds and who hears about the run.

``notify.<kind>`` is validated by that notifier kind's own model (benchwright.notifiers): a kind is its
folder plus a line in the registry. A webhook URL is a secret: the spec names where it is kept (an env
var or a Secrets Manager ARN), never the URL itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from benchwright.judge.validity import ValidityPolicy as JudgePolicy
from benchwright.notifiers import registry
from benchwright.notifiers.slack.spec import SLACK_SECRET_NAME, SlackSpec
from benchwright.spec._base import StrictModel

# A cloud spec's own Slack secret is named by Slack's kind (benchwright.notifiers.slack.spec); the name
# stays importable from here for the stack (infra/permissions.py, infra/nag.py).
__all__ = ["SLACK_SECRET_NAME", "NotifySpec", "SlackSpec", "ValidityPolicy"]


class ValidityPolicy(JudgePolicy):
    """The judge's thresholds (benchwright.judge.validity, where the defaults live) plus the verdict's."""

    min_effect: float = Field(default=0.05, gt=0, lt=1)  # smallest relative change a verdict calls a change
    # `benchwright run` exits 4 for a run that ended invalid; false: exit 0 for it (the status stays
    # "invalid" in the record, the report and the message: only the exit code is relaxed)
    fail_on_invalid: bool = True
    # a burst bucket the forecast sees draining during the run (benchwright.forecast): `validate`,
    # `run` and `submit` warn, or refuse the spec before anything is created
    credits: Literal["warn", "refuse"] = "warn"


class NotifySpec(StrictModel):
    """When the finish stage sends the run's message (benchwright.stages.finish.should_notify):
    always; success (the run succeeded); failure (failed, aborted or invalid); regression (slower
    than its history, or failed, aborted or invalid)."""

    # Slack's section is a declared field so that a stored spec keeps its shape (``slack: null``); every
    # other registered kind's section is an extra key, validated by the kind's model (_kinds below)
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    slack: SlackSpec | None = None
    on: Literal["always", "success", "failure", "regression"] = "always"

    def configured(self) -> list[tuple[str, BaseModel]]:
        """(kind name, its validated section) for every notifier the spec configures, Slack first."""
        found: list[tuple[str, BaseModel]] = [("slack", self.slack)] if self.slack is not None else []
        found += [
            (name, section) for name, section in (self.model_extra or {}).items() if section is not None
        ]
        return found

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

    @model_validator(mode="before")
    @classmethod
    def _kinds(cls, data: Any) -> Any:
        """Each key other than ``on`` and ``slack`` names a registered notifier kind; its section is
        validated by the kind's model, and an error names the field (``notify.<kind>.<field>``)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key, value in data.items():
            if key in ("on", "slack", True):
                continue
            kind = registry.get(key) if isinstance(key, str) else None
            if kind is None or kind.name == "slack":
                raise PydanticCustomError(
                    "sub_field",
                    "unknown notifier (one of {known})",
                    {"path": str(key), "known": ", ".join(registry.kinds())},
                )
            try:
                out[key] = kind.spec.model_validate(value)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(part) for part in (key, *first["loc"]))
                message = first["msg"].removeprefix("Value error, ")
                if first["type"] == "extra_forbidden":
                    message = "unknown field (not allowed here)"
                raise PydanticCustomError(
                    "sub_field", "{message}", {"path": where, "message": message}
                ) from None
        return out
