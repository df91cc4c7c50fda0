"""The benchmark spec: one YAML file says what to provision, where to run, what to drive, what to report.

Validation happens once, before anything is created: pydantic models with extra fields forbidden, the
target and its settings a discriminated union by ``provider``, cross-field rules in model validators,
then the semantic checks that need the workload registry (does the workload exist, can this engine
run it, are its properties valid). Every failure is a ``SpecError`` whose field is the dotted path of
the culprit (``workload.properties.readproportion``, ``target.storage.iops``).

A file holds either one benchmark or a suite (``suite: NAME`` + ``benchmarks: [...]``).

The package is split by concern; this module re-exports the public names so that callers import
``from benchwright.spec import ...`` and never depend on the layout:

- ``targets``: one model per provider; ``runners``: the runner section; ``workload``: workload and
  phases; ``notify``: validity and notification; ``model``: the whole spec and suite;
- ``loading``: the entry points (parse/load); ``errors``: pydantic errors as ``SpecError``;
  ``checks``: the workload registry checks; ``matrix``: matrix expansion; ``duration``: estimates.
"""

from __future__ import annotations

from benchwright.spec._base import Engine, Scalar
from benchwright.spec.checks import check_workload, native_tools
from benchwright.spec.duration import ASSUMED_OPS_PER_S, cell_seconds, phase_seconds
from benchwright.spec.loading import load_spec, load_suite, parse_spec, parse_suite, parse_target
from benchwright.spec.matrix import FREE_FORM, Cell, expand_matrix, split_path
from benchwright.spec.model import ZIP, BenchmarkSpec, SuiteSpec, is_zip, spec_dict
from benchwright.spec.notify import NotifySpec, SlackSpec, ValidityPolicy
from benchwright.spec.properties import enabled_phases, workload_properties
from benchwright.spec.runners import FARGATE_CPU, RunnerSize, RunnerSpec
from benchwright.spec.targets import (
    CLOUD_PROVIDERS,
    PROVIDERS,
    AuroraTarget,
    Ec2Target,
    Ec2Volume,
    ElastiCacheTarget,
    EndpointTarget,
    LocalTarget,
    MemoryDbTarget,
    RdsStorage,
    RdsTarget,
    ServerlessV2,
    StorageType,
    TargetSpec,
    VolumeType,
)
from benchwright.spec.workload import Phases, PhaseSpec, WorkloadSpec

__all__ = [
    "ASSUMED_OPS_PER_S",
    "CLOUD_PROVIDERS",
    "FARGATE_CPU",
    "FREE_FORM",
    "PROVIDERS",
    "ZIP",
    "AuroraTarget",
    "BenchmarkSpec",
    "Cell",
    "Ec2Target",
    "Ec2Volume",
    "ElastiCacheTarget",
    "EndpointTarget",
    "Engine",
    "LocalTarget",
    "MemoryDbTarget",
    "NotifySpec",
    "PhaseSpec",
    "Phases",
    "RdsStorage",
    "RdsTarget",
    "RunnerSize",
    "RunnerSpec",
    "Scalar",
    "ServerlessV2",
    "SlackSpec",
    "StorageType",
    "SuiteSpec",
    "TargetSpec",
    "ValidityPolicy",
    "VolumeType",
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
