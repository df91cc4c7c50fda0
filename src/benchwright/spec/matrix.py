"""The ``matrix``: every combination of its values as a concrete, validated spec (a ``Cell``).

Paths into the spec (``workload.properties.redis.datatype``) are set in the written data and the
result re-validated, so each cell obeys every rule a hand-written spec does.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from benchwright.errors import SpecError
from benchwright.spec.errors import from_validation
from benchwright.spec.model import BenchmarkSpec, is_zip, spec_dict


@dataclass(frozen=True)
class Cell:
    cell_id: str
    parameters: dict[str, Any]
    spec: BenchmarkSpec


def _short(path: str) -> str:
    return split_path(path)[-1]


FREE_FORM = ("properties", "settings")  # mappings whose keys may themselves contain dots (redis.datatype)


def split_path(path: str) -> list[str]:
    """``workload.properties.redis.datatype`` -> [workload, properties, redis.datatype]."""
    keys = path.split(".")
    for i, key in enumerate(keys[:-1]):
        if key in FREE_FORM:
            return [*keys[: i + 1], ".".join(keys[i + 1 :])]
    return keys


def _set_path(data: dict[str, Any], path: str, value: Any, prefix: str) -> None:
    """Set a field path in the nested spec data, creating mappings that were left to their defaults."""
    keys = split_path(path)
    node: Any = data
    for i, key in enumerate(keys[:-1]):
        if not isinstance(node, dict):
            raise SpecError(f"{prefix}matrix.{path}", f"{'.'.join(keys[:i])} is not a mapping")
        if key not in node or node[key] is None:
            node[key] = {}
        node = node[key]
    if not isinstance(node, dict):
        raise SpecError(f"{prefix}matrix.{path}", f"{'.'.join(keys[:-1])} is not a mapping")
    node[keys[-1]] = value


def _fmt(value: Any) -> str:
    """A matrix value as it appears in a cell id: lists joined with +, mappings as k=v/k=v."""
    if isinstance(value, list):
        return "+".join(_fmt(v) for v in value)
    if isinstance(value, dict):
        return "/".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return str(value)


def _axes(matrix: dict[str, list[Any]]) -> list[list[dict[str, Any]]]:
    """Each matrix axis as its list of {path: value} settings; a ``zip`` axis sets several at once."""
    return [
        [dict(v) for v in values] if is_zip(path) else [{path: v} for v in values]
        for path, values in matrix.items()
    ]


def expand_matrix(spec: BenchmarkSpec, prefix: str = "") -> list[Cell]:
    """Every combination of the matrix values, each a concrete validated spec (repeats not expanded).

    ``matrix.zip`` links axes: its entries vary together (datatype string with fieldcount 1, hash with
    10) and combine with the other axes like one axis."""
    if not spec.matrix:
        return [Cell("default", {}, spec)]
    pre = f"{prefix}." if prefix else ""
    axes = _axes(spec.matrix)
    paths = list(dict.fromkeys(p for axis in axes for setting in axis for p in setting))
    base = spec_dict(spec)
    base.pop("matrix", None)
    cells: list[Cell] = []
    shorts = [_short(p) for p in paths]
    names = dict(zip(paths, shorts if len(set(shorts)) == len(shorts) else paths, strict=True))
    for combo in itertools.product(*axes):
        settings = {p: v for setting in combo for p, v in setting.items()}
        data = copy.deepcopy(base)
        for path, value in settings.items():
            _set_path(data, path, value, pre)
        try:
            concrete = BenchmarkSpec.model_validate(data)
        except ValidationError as exc:
            err = from_validation(exc)
            values = ", ".join(f"{p}={v}" for p, v in settings.items())
            raise SpecError(f"{pre}{err.field}", f"{err.detail} (matrix cell {values})") from None
        cell_id = ",".join(f"{names[p]}={_fmt(v)}" for p, v in settings.items())
        cells.append(Cell(cell_id, settings, concrete))
    return cells
