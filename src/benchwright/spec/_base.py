"""What every spec model shares: the strict base model and the checks of server settings.

Kept apart so that each section's module (targets, runner, workload, notify) imports one small base
instead of the whole spec (the rules for ``settings`` are in ``server_settings``).
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, model_validator

from benchwright.results import text_secret

Engine = Literal["postgres", "mysql", "redis"]
Scalar = str | int | float | bool
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
AZ_NAME_RE = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$")  # eu-west-1a
AZ_ID_RE = re.compile(r"^[a-z]{3,4}\d-az\d+$")  # euw1-az2
# Values that reach a shell, a config file, a URL or an AWS call are held to patterns that admit no
# separator, quote, space or newline (issue 30): the field's path names the culprit.
VERSION_RE = re.compile(r"^[0-9][0-9A-Za-z._-]{0,63}$")  # 16.4, 8.0.mysql_aurora.3.05.2, 2024.2.0.0
EC2_TYPE_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}\.[a-z0-9]{1,30}$")  # m6i.4xlarge
DB_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,62}$")  # a database or user name (no URL syntax)
HOST_RE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?\.?)+$|^\[[0-9A-Fa-f:.]{2,45}\]$")
SECRET_ARN_RE = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$")


def _numeric(annotation: Any) -> bool:
    """int / float (also inside Optional / unions), but not a bool field."""
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    return any(_numeric(a) for a in get_args(annotation))


def shown(value: Any, limit: int = 80) -> str:
    """A refused value as an error message may repeat it: its repr, cut to ``limit``, unless it may hold
    a credential (``user:password@host``, a ``password=`` pair, a webhook), which is never repeated."""
    text = str(value)
    if "@" in text or text_secret(text):
        return "(the value is not repeated: it may hold a credential)"
    return repr(text[:limit])


def matching(regex: re.Pattern[str], what: str) -> Any:
    """A field validator: the value (or each item of a list) must match ``regex``."""

    def check(cls: Any, value: Any) -> Any:
        for item in value if isinstance(value, list) else [value]:
            if item is not None and not regex.match(str(item)):
                raise ValueError(f"{shown(item)} is not {what}")
        return value

    return classmethod(check)


class StrictModel(BaseModel):
    """Unknown fields are errors; a boolean is never read as a number."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_as_number(cls, data: Any) -> Any:
        # pydantic's lax mode reads `threads: true` as 1; a boolean is never a count or a size
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                value = data.get(name)
                if isinstance(value, bool) and _numeric(field.annotation):
                    raise ValueError(f"{name}: expected a number, got {str(value).lower()}")
        return data
