"""pydantic's ValidationError as a ``SpecError`` whose field is the dotted path of the culprit.

One translation for every entry point (parse, suite, matrix cell), so a user sees ``target.storage.iops``
and never pydantic's union tags.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from benchwright.errors import SpecError
from benchwright.spec.targets import PROVIDERS


def _loc_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for i, item in enumerate(loc):
        if isinstance(item, int):
            parts[-1:] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
            continue
        # the discriminated union puts the provider tag in the location: target.rds.storage -> target.storage
        # (or leads it, when a target section is validated on its own: parse_target)
        if item in PROVIDERS and (i == 0 or loc[i - 1] == "target"):
            continue
        if item.startswith("function-") or item in ("tagged-union[...]",):
            continue
        parts.append(str(item))
    return ".".join(parts)


def from_validation(exc: ValidationError, prefix: str = "") -> SpecError:
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = _loc_path(tuple(first["loc"]))
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field (not allowed here)"
    elif first["type"] == "union_tag_invalid":
        message = f"unknown provider (one of {', '.join(PROVIDERS)})"
    elif first["type"] == "bad_setting":  # spec.server_settings: the setting itself is the field
        name = (first.get("ctx") or {}).get("name")
        field = ".".join(p for p in (field, "settings", name) if p)
    elif first["type"] == "sub_field":  # a section validated by its own model (a notifier kind's)
        field = ".".join(p for p in (field, str((first.get("ctx") or {}).get("path", ""))) if p)
    elif first["type"] == "union_tag_not_found":
        field = f"{field}.provider" if field else "provider"
        message = f"missing (one of {', '.join(PROVIDERS)})"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    full = ".".join(p for p in (prefix, field) if p)
    return SpecError(full, message)
