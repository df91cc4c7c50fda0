"""What every spec model shares: the strict base model and the checks of server settings.

Kept apart so that each section's module (targets, runner, workload, notify) imports one small base
instead of the whole spec, and the rules for ``settings`` live in one place.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, model_validator

Engine = Literal["postgres", "mysql", "redis"]
Scalar = str | int | float | bool
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
SETTING_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
AZ_NAME_RE = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$")  # eu-west-1a
AZ_ID_RE = re.compile(r"^[a-z]{3,4}\d-az\d+$")  # euw1-az2
SECRET_ARN_RE = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$")


def _numeric(annotation: Any) -> bool:
    """int / float (also inside Optional / unions), but not a bool field."""
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    return any(_numeric(a) for a in get_args(annotation))


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


# Settings a spec may not give a local server: where it listens, which files it reads or runs, its
# password. The tool sets these itself; from a spec they would open the server or the machine.
_RESERVED_SETTINGS = re.compile(
    r"^(include.*|bind|bind[-_]address|listen_addresses|port|unixsocket.*|unix_socket.*|socket|dir|"
    r"datadir|data_directory|tmpdir|pid[-_]file|dbfilename|logfile|log[-_]error|requirepass|masterauth|"
    r"protected[-_]mode|daemonize|rename-command|loadmodule|hba_file|ident_file|config_file|"
    r"archive_command|restore_command|shared_preload_libraries|local_preload_libraries|"
    r"session_preload_libraries|dynamic_library_path|ssl_.*_file|plugin[-_]load.*|plugin[-_]dir|"
    r"init[-_]file|secure[-_]file[-_]priv|general[-_]log[-_]file|slow[-_]query[-_]log[-_]file|"
    r"skip[-_]grant[-_]tables|user|aclfile)$",
    re.IGNORECASE,
)


def settings_names(values: dict[str, Scalar]) -> dict[str, Scalar]:
    """Names of the form a config file takes; values typed scalars on one line (a newline or control
    character would add a directive of its own to redis.conf, postgresql.conf or my.cnf)."""
    for key, value in values.items():
        if not SETTING_RE.match(key):
            raise ValueError(f"invalid setting name {key!r}")
        if _RESERVED_SETTINGS.match(key):
            raise ValueError(f"{key}: set by Benchwright itself (where the server listens, its files)")
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError(f"{key}: a value must be one line without control characters")
        if isinstance(value, str) and len(value) > 1024:
            raise ValueError(f"{key}: a value is at most 1024 characters")
    return values
