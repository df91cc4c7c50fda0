"""Guards on a spec's raw data that hold on every path into the system (CLI, API, submit, suite).

They run on the plain data before the pydantic models see it, because what they refuse must never
reach a model dump, a plan or a store: passwords written in the spec, workload files outside the
spec's directory (``/proc/self/environ``, ``/dev/zero``), and matrices too large to expand.

- Secrets are passed by reference only: ``target.password_env`` (an environment variable's name) or
  a Secrets Manager ARN. A password-like key with a value, or a URL with a password, is refused,
  naming the field and the way to pass it.
- ``workload.files`` may name a packaged workload (workloada..f) anywhere. A file is read only when
  the spec comes from a file: it must be a regular file under the spec's directory (or the
  ``--files-root`` the user names), at most ``MAX_PROPERTY_FILE`` bytes, and its properties are
  inlined into ``workload.properties`` so that no later layer (the runner, a Lambda) reads a path.
  Errors name the file and line, never its content.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchwright.errors import SpecError
from benchwright.results import text_secret

MAX_CELLS = 1000  # local; a cloud spec is further held to the workflow's Map limit
CLOUD_MAX_CELLS = 64  # statemachines/suite.asl.json: the Map state's MaxConcurrency-bounded fan-out
SECRET_WORDS = {
    "password",
    "passwd",
    "pwd",
    "pass",
    "requirepass",
    "masterauth",
    "secret",
    "token",
    "credential",
    "credentials",
    "apikey",
    "auth",
}
_REFERENCE_SUFFIXES = ("_env", "_arn", ".env", ".arn")
HOW_TO_PASS = (
    "pass secrets by reference: target.password_env (the NAME of an environment variable, endpoint "
    "targets) or a Secrets Manager ARN; local servers get a generated password"
)


def is_secret_key(key: str) -> bool:
    """``postgres.password``, ``redis.auth``, ``requirepass`` ... but not ``password_env``."""
    low = key.lower()
    if low.endswith(_REFERENCE_SUFFIXES):
        return False
    return any(part in SECRET_WORDS for part in re.split(r"[._\-]", low))


def _walk(data: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(dotted path, key, value) for every mapping entry and list item, depth first."""
    if isinstance(data, dict):
        for key, value in data.items():
            sub = f"{path}.{key}" if path else str(key)
            yield sub, key, value
            yield from _walk(value, sub)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            sub = f"{path}[{i}]"
            yield sub, None, value
            yield from _walk(value, sub)


def check_no_secrets(data: Any, prefix: str = "") -> None:
    """Refuse a secret written in the spec: a password-like key with a value, or a value holding a URL
    with a password, a ``password=`` pair (DSN, URL query), or a Slack webhook. Run on the final data
    (property and SQL files inlined); one pass over the data, each string scanned in linear time."""
    for path, key, value in _walk(data, prefix):
        if isinstance(key, str) and is_secret_key(key) and value not in (None, "", [], {}):
            raise SpecError(path, f"a secret written in the spec is refused; {HOW_TO_PASS}")
        for text in (key, value):
            found = text_secret(text) if isinstance(text, str) else None
            if found:
                raise SpecError(path, f"{found} is refused (write it without one); {HOW_TO_PASS}")
        if (path == "matrix" or path.endswith(".matrix")) and isinstance(value, dict):
            for varied in value:
                last = varied.rsplit(".", 1)[-1] if isinstance(varied, str) else ""
                if is_secret_key(last):
                    raise SpecError(
                        f"{path}.{varied}", f"a secret cannot be varied in a matrix; {HOW_TO_PASS}"
                    )
                if last in ("file", "init_file") and varied.rsplit(".", 2)[-2:-1] == ["sql"]:
                    raise SpecError(
                        f"{path}.{varied}", "a file cannot be varied in a matrix (vary sql.script's text)"
                    )


def check_text(data: Any, prefix: str = "") -> None:
    """Every key and string is text that can be stored and sent: no lone surrogate (which validates,
    then fails the first write as UTF-8) and no NUL byte. Errors name the field."""
    for path, key, value in _walk(data, prefix):
        for text in (key, value):
            if not isinstance(text, str):
                continue
            if "\0" in text:
                raise SpecError(_printable(path), "holds a NUL byte")
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise SpecError(_printable(path), "is not valid text (a lone UTF-16 surrogate)") from None


def _printable(path: str) -> str:
    """A field path safe to print: what cannot be written as UTF-8 is escaped."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8").replace("\0", "\\0")


# ---------------------------------------------------------------- workload files
def _packaged(name: Any) -> bool:
    from benchwright.runner.workloads.ycsb.properties import PACKAGED

    return name in PACKAGED


MAX_SQL_FILE = 1 << 20  # a SQL script is statements, not data
SQL_FILES = {"sql.file": "sql.script", "sql.init_file": "sql.init"}  # a file property -> its text
_DEVICE_TREES = ("/proc", "/sys", "/dev")


def read_spec_file(entry: Any, root: Path | None, field: str, what: str, limit: int) -> str:
    """The one rule for every file a spec names (property files, ``sql.file``, ``sql.init_file``):
    a name without NUL, resolved against the spec's directory (``root``) and under it, a regular file
    outside /proc, /sys and /dev, at most ``limit`` bytes, opened without blocking (a FIFO never
    hangs), UTF-8. ``root`` None (the API, a stored spec): no host file is read at all. Errors name
    the field and the file, never its content."""
    if not isinstance(entry, str) or not entry:
        raise SpecError(field, "must be a file name")
    if "\0" in entry or not entry.isprintable() or len(entry) > 4096:
        raise SpecError(field, "a file name is one printable line without NUL bytes")
    try:
        entry.encode("utf-8")
    except UnicodeEncodeError:
        raise SpecError(field, "a file name must be valid UTF-8 text") from None
    shown = entry if len(entry) <= 120 else entry[:117] + "..."
    if root is None:
        raise SpecError(
            field,
            f"{shown!r}: no file is read here (the API, a stored spec); give the {what}'s text inline",
        )
    from benchwright.yamlload import read_text

    base = root.resolve()
    path = (base / entry).resolve()
    if not path.is_relative_to(base):
        raise SpecError(
            field,
            f"{shown!r} is outside {base} (files must be under the spec's directory, or name another "
            "directory with --files-root)",
        )
    if any(path.is_relative_to(tree) for tree in _DEVICE_TREES):
        raise SpecError(field, f"{shown!r}: files under /proc, /sys or /dev are not read")
    if not path.exists():
        from benchwright.runner.workloads.ycsb.properties import PACKAGED

        extra = f" (packaged workloads: {', '.join(PACKAGED)})" if what == "property file" else ""
        raise SpecError(field, f"{shown!r}: no such file{extra}")
    if not path.is_file():  # a directory, a FIFO, a device
        raise SpecError(field, f"{shown!r}: the {what} must be a regular file")
    try:
        return read_text(path, what, limit)
    except SpecError as exc:
        raise SpecError(field, f"{shown!r}: {exc.detail}") from None


def read_property_file(entry: str, root: Path, field: str) -> dict[str, str]:
    """One property file named in a spec (``read_spec_file``'s rule), parsed."""
    # deferred: importing the ycsb package registers every workload (runner/workloads/__init__.py)
    from benchwright.runner.workloads.ycsb.properties import MAX_PROPERTY_FILE, parse_property_text

    text = read_spec_file(entry, root, field, "property file", MAX_PROPERTY_FILE)
    return parse_property_text(text, entry)


def _inline_sql(properties: Any, root: Path | None, where: str) -> Any:
    """``sql.file`` / ``sql.init_file`` read by the one rule and carried as ``sql.script`` /
    ``sql.init`` (the file's name stays, for messages); a property that already holds the text wins
    and no file is read."""
    if not isinstance(properties, dict) or not any(k in properties for k in SQL_FILES):
        return properties
    out = dict(properties)
    for file_key, text_key in SQL_FILES.items():
        if file_key not in out or out.get(text_key):
            continue
        out[text_key] = read_spec_file(out[file_key], root, f"{where}.{file_key}", "SQL file", MAX_SQL_FILE)
    return out


def inline_sql_files(data: Any, root: Path | None, prefix: str = "") -> Any:
    """A copy of one benchmark's data with the SQL files its properties (and phases') name inlined."""
    if not isinstance(data, dict) or not isinstance(data.get("workload"), dict):
        return data
    out = dict(data)
    workload = dict(out["workload"])
    at = f"{prefix + '.' if prefix else ''}workload"
    workload["properties"] = _inline_sql(workload.get("properties"), root, f"{at}.properties")
    if "properties" not in out["workload"]:
        workload.pop("properties")
    phases = workload.get("phases")
    if isinstance(phases, dict):
        workload["phases"] = {
            name: (
                {**p, "properties": _inline_sql(p["properties"], root, f"{at}.phases.{name}.properties")}
                if isinstance(p, dict) and "properties" in p
                else p
            )
            for name, p in phases.items()
        }
    out["workload"] = workload
    return out


def inline_files(data: Any, root: Path | None, prefix: str = "") -> Any:
    """A copy of one benchmark's data with its property files read and merged into properties.

    Packaged names at the head of ``files`` stay (they are part of the code); from the first real
    file on, everything is inlined in order so the precedence (files < properties < phase) holds.
    """
    if not isinstance(data, dict) or not isinstance(data.get("workload"), dict):
        return data
    files = data["workload"].get("files")
    if not isinstance(files, list) or all(_packaged(f) for f in files):
        return data
    out = copy.deepcopy(data)
    workload = out["workload"]
    keep: list[str] = []
    merged: dict[str, Any] = {}
    inlining = False
    for i, entry in enumerate(files):
        field = f"{prefix + '.' if prefix else ''}workload.files[{i}]"
        if not isinstance(entry, str):
            raise SpecError(field, "must be a file name")
        if _packaged(entry) and not inlining:
            keep.append(entry)
            continue
        inlining = True
        if _packaged(entry):
            from benchwright.runner.workloads.ycsb.properties import packaged_path, parse_property_file

            merged.update(parse_property_file(packaged_path(entry) or Path(entry), display=entry))
            continue
        if root is None:
            raise SpecError(
                field,
                f"{str(entry)[:120]!r}: only packaged workloads can be named here; a property file is "
                "read from the spec's directory when the spec is given as a file",
            )
        read = read_property_file(entry, root, field)
        check_no_secrets(read, field)  # named by the file it came from
        merged.update(read)
    properties = workload.get("properties") or {}
    if not isinstance(properties, dict):
        return out  # the model reports the type
    workload["files"] = keep
    workload["properties"] = {**merged, **properties}
    return out


# ---------------------------------------------------------------- bounded expansion
def matrix_cells(data: Any) -> int:
    """The number of cells a benchmark's matrix expands to, computed without expanding it."""
    matrix = data.get("matrix") if isinstance(data, dict) else None
    if not isinstance(matrix, dict) or not matrix:
        return 1
    return math.prod(len(v) if isinstance(v, list) else 1 for v in matrix.values())


def check_cells(data: Any, prefix: str = "") -> int:
    """Refuse a matrix over the limit before it is expanded (a cloud spec: the workflow's 64)."""
    cells = matrix_cells(data)
    target = data.get("target") if isinstance(data, dict) else None
    provider = target.get("provider") if isinstance(target, dict) else None
    cloud = provider not in (None, "local", "endpoint")
    limit = CLOUD_MAX_CELLS if cloud else MAX_CELLS
    if cells > limit:
        whose = "one AWS workflow execution's limit" if cloud else "the limit for one spec"
        raise SpecError(
            f"{prefix + '.' if prefix else ''}matrix",
            f"expands to {cells:,} cells, more than {limit} ({whose}); split it into several specs",
        )
    return cells


# ---------------------------------------------------------------- paths from user values
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+,-]")


def path_component(value: str, limit: int = 120) -> str:
    """A user value (cell id, tag) made safe as ONE path component: no separators, no '..', bounded."""
    import hashlib

    safe = _UNSAFE.sub("_", value).lstrip(".") or "_"
    if safe != value or len(safe) > limit:
        digest = hashlib.sha256(value.encode()).hexdigest()[:8]
        safe = f"{safe[: limit - 9]}~{digest}" if len(safe) > limit or safe != value else safe
    return safe
