"""The entry points: a YAML file or a mapping -> a validated ``BenchmarkSpec`` / ``SuiteSpec``.

Validation happens here, once, before anything is created: the raw-data guards (no secrets, a bounded
matrix), the models, then the workload checks for the spec and for every matrix cell.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from benchwright.errors import SpecError
from benchwright.spec.checks import check_workload
from benchwright.spec.errors import from_validation
from benchwright.spec.matrix import expand_matrix
from benchwright.spec.model import BenchmarkSpec, SuiteSpec
from benchwright.spec.targets import TargetSpec

_TARGET: TypeAdapter[TargetSpec] = TypeAdapter(TargetSpec)


def _read_yaml(path: str | Path) -> Any:
    from benchwright.yamlload import load_file

    return load_file(path)


def _prepare(data: Any, prefix: str, files_root: Path | None) -> Any:
    """The files a spec names inlined (one rule: specguard.read_spec_file), then the raw-data guards
    on the final data (text fit to store, no secrets, a bounded matrix)."""
    from benchwright.specguard import (
        check_cells,
        check_no_secrets,
        check_text,
        inline_files,
        inline_sql_files,
    )

    check_text(data, prefix)  # before files are read: a name with NUL or a lone surrogate
    data = inline_sql_files(inline_files(data, files_root, prefix), files_root, prefix)
    check_text(data, prefix)  # and what the files brought
    check_no_secrets(data, prefix)
    check_cells(data, prefix)
    return data


def parse_spec(data: Any, prefix: str = "", files_root: Path | None = None) -> BenchmarkSpec:
    """Validate a mapping as a benchmark spec, including the workload checks.

    ``files_root``: the directory property files in ``workload.files`` are read from (the spec's
    own directory, or --files-root); None (the API, a stored spec) allows packaged workloads only."""
    if not isinstance(data, dict):
        raise SpecError(prefix, "a spec must be a mapping")
    data = _prepare(data, prefix, files_root)
    try:
        spec = BenchmarkSpec.model_validate(data)
    except ValidationError as exc:
        raise from_validation(exc, prefix) from None
    check_workload(spec, prefix)
    for cell in expand_matrix(spec, prefix=prefix):
        if cell.parameters:
            check_workload(cell.spec, prefix)
    return spec


def parse_suite(data: Any, files_root: Path | None = None) -> SuiteSpec:
    if isinstance(data, dict) and "suite" in data:
        benchmarks = data.get("benchmarks")
        if not isinstance(benchmarks, list) or not benchmarks:
            raise SpecError("benchmarks", "a suite needs a non-empty list of benchmarks")
        prepared = []
        for i, b in enumerate(benchmarks):
            if isinstance(b, dict):
                b = _prepare(b, f"benchmarks[{i}]", files_root)
            parse_spec(b, prefix=f"benchmarks[{i}]")
            prepared.append(b)
        try:
            return SuiteSpec.model_validate({**data, "benchmarks": prepared})
        except ValidationError as exc:
            raise from_validation(exc) from None
    spec = parse_spec(data, files_root=files_root)
    return SuiteSpec(suite=spec.name, description=spec.description, benchmarks=[spec])


def load_spec(path: str | Path, files_root: Path | None = None) -> BenchmarkSpec:
    """One benchmark from a YAML file (a suite file must hold exactly one benchmark)."""
    suite = load_suite(path, files_root)
    if len(suite.benchmarks) != 1:
        raise SpecError(
            "benchmarks", f"{path} is a suite of {len(suite.benchmarks)} benchmarks; use load_suite"
        )
    return suite.benchmarks[0]


def load_suite(path: str | Path, files_root: Path | None = None) -> SuiteSpec:
    """A suite from a YAML file; a plain benchmark file becomes a suite of one. Property files are
    read from ``files_root`` (default: the spec's directory), nowhere else."""
    root = Path(files_root) if files_root is not None else Path(path).parent
    return parse_suite(_read_yaml(path), root)


def parse_target(data: Any) -> TargetSpec:
    """One ``target`` section on its own, as the provider's model (errors name ``target.FIELD``)."""
    try:
        return _TARGET.validate_python(data)
    except ValidationError as exc:
        raise from_validation(exc, "target") from None
