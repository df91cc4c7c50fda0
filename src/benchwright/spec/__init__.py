"""The benchmark spec: one YAML file says what to provision, where to run, what to drive, what to report.

Validation happens once, before anything is created: pydantic models with extra fields forbidden, the
target and its settings a discriminated union by ``provider``, cross-field rules in model validators,
then the semantic checks that need the workload registry (does the workload exist, can this engine
run it, are its properties valid). Every failure is a ``SpecError`` whose field is the dotted path of
the culprit (``workload.properties.readproportion``, ``target.storage.iops``).

A file holds either one benchmark or a suite (``suite: NAME`` + ``benchmarks: [...]``).

The package is split by concern; this module re-exports the public names so that callers import
``from benchwright.spec import ...`` and never depend on the layout. It imports them on first use
(PEP 562): a module of the package (``_base``, ``target_facts``) is importable without the rest, as
the AWS kinds' spec models (providers/aws/targets/kinds/NAME/spec.py), which ``targets`` reads, need.

- ``targets``: the target section (``local``'s model, and the union with the AWS kinds' models);
  ``runners``: the runner section; ``workload``: workload and phases; ``notify``: validity and
  notification; ``model``: the whole spec and suite;
- ``loading``: the entry points (parse/load); ``errors``: pydantic errors as ``SpecError``;
  ``checks``: the workload registry checks; ``matrix``: matrix expansion; ``duration``: estimates.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.spec._base import Engine, Scalar
    from benchwright.spec.checks import check_workload, native_tools
    from benchwright.spec.duration import ASSUMED_OPS_PER_S, cell_seconds, phase_seconds
    from benchwright.spec.loading import load_spec, load_suite, parse_spec, parse_suite, parse_target
    from benchwright.spec.matrix import FREE_FORM, Cell, expand_matrix, split_path
    from benchwright.spec.model import ZIP, BenchmarkSpec, SuiteSpec, is_zip, spec_dict
    from benchwright.spec.notify import NotifySpec, SlackSpec, ValidityPolicy
    from benchwright.spec.properties import enabled_phases, workload_properties
    from benchwright.spec.runners import FARGATE_CPU, RunnerSize, RunnerSpec
    from benchwright.spec.targets import CLOUD_PROVIDERS, PROVIDERS, LocalTarget, TargetSpec
    from benchwright.spec.workload import Phases, PhaseSpec, WorkloadSpec

# name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    "ASSUMED_OPS_PER_S": "duration",
    "BenchmarkSpec": "model",
    "CLOUD_PROVIDERS": "targets",
    "Cell": "matrix",
    "Engine": "_base",
    "FARGATE_CPU": "runners",
    "FREE_FORM": "matrix",
    "LocalTarget": "targets",
    "NotifySpec": "notify",
    "PROVIDERS": "targets",
    "PhaseSpec": "workload",
    "Phases": "workload",
    "RunnerSize": "runners",
    "RunnerSpec": "runners",
    "Scalar": "_base",
    "SlackSpec": "notify",
    "SuiteSpec": "model",
    "TargetSpec": "targets",
    "ValidityPolicy": "notify",
    "WorkloadSpec": "workload",
    "ZIP": "model",
    "cell_seconds": "duration",
    "check_workload": "checks",
    "enabled_phases": "properties",
    "expand_matrix": "matrix",
    "is_zip": "model",
    "load_spec": "loading",
    "load_suite": "loading",
    "native_tools": "checks",
    "parse_spec": "loading",
    "parse_suite": "loading",
    "parse_target": "loading",
    "phase_seconds": "duration",
    "spec_dict": "model",
    "split_path": "matrix",
    "workload_properties": "properties",
}


def __getattr__(name: str) -> Any:
    """``from benchwright.spec import BenchmarkSpec``: its module, imported now."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "ASSUMED_OPS_PER_S",
    "CLOUD_PROVIDERS",
    "FARGATE_CPU",
    "FREE_FORM",
    "PROVIDERS",
    "ZIP",
    "BenchmarkSpec",
    "Cell",
    "Engine",
    "LocalTarget",
    "NotifySpec",
    "PhaseSpec",
    "Phases",
    "RunnerSize",
    "RunnerSpec",
    "Scalar",
    "SlackSpec",
    "SuiteSpec",
    "TargetSpec",
    "ValidityPolicy",
    "WorkloadSpec",
    "cell_seconds",
    "check_workload",
    "enabled_phases",
    "expand_matrix",
    "is_zip",
    "load_spec",
    "load_suite",
    "native_tools",
    "parse_spec",
    "parse_suite",
    "parse_target",
    "phase_seconds",
    "spec_dict",
    "split_path",
    "workload_properties",
]
