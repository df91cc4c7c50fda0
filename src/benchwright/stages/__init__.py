"""The workflow's stages: one plain function per stage, each ``(RunState, Providers) -> RunState``.

The same functions run inside the Step Functions Lambdas (functions/) and in the local orchestrator
(benchwright.local), in the order of ``STAGE_ORDER``. The ASL's Task states carry the PascalCase form of
these names (``provision_target`` -> ``ProvisionTarget``; see ``asl_state_name``) and a test holds
statemachines/benchmark.asl.json to that order. Stages with a ``check_`` prefix never block: they
poll once and set a status, and the caller (ASL Wait/Choice, or ``local.wait_until``) loops.

``RunState`` is deliberately small and serializable: ids, pointers, statuses, timestamps, the error.
Never secrets, never whole result documents (Step Functions has a 256 KiB state limit).

Its ``spec`` is the cell's validated ``BenchmarkSpec``, typed from parse to provider: a stage reads
fields, never a dict. Between processes (the Lambdas, the ASL) it travels as ``spec_dict`` (what was
written, defaults left out), which validates back to the same spec; in one process (the local
orchestrator) the model is passed on and never validated again.

``FinishState`` is what finishing a run needs and nothing more: the suite's SummarizeSuite and an
aborted execution finish a run that has no cell state (and, for an execution stopped before its spec
was read, no spec). A ``RunState`` is a ``FinishState`` with the cell's progress and a spec it always
has, so the one ``finish_run`` stage takes either.
"""

from __future__ import annotations

from collections.abc import Callable

from benchwright.providers.base import Providers
from benchwright.stages.state import FinishState, RunState, RunStatus, utcnow

Stage = Callable[[RunState, Providers], RunState]

# The order of the workflow. The ASL inserts Wait/Choice states around the three check_ stages.
STAGE_ORDER: list[str] = [
    "validate_spec",
    "provision_target",
    "check_target",
    "launch_runner",
    "check_runner",
    "check_operations",
    "collect_metrics",
    "judge_results",
    "store_results",
    "price_run",
    "teardown",
    "finish_run",
]
# What one cell runs before its teardown (the local orchestrator's loop; teardown runs on every path).
CELL_STAGES: list[str] = STAGE_ORDER[: STAGE_ORDER.index("teardown")]


def asl_state_name(stage: str) -> str:
    """``provision_target`` -> ``ProvisionTarget`` (the Task state's name in the ASL)."""
    return "".join(part.capitalize() for part in stage.split("_"))


ASL_STATE_NAMES: list[str] = [asl_state_name(s) for s in STAGE_ORDER]


def stage_function(name: str) -> Stage:
    """The function for a stage name (imported lazily so a Lambda loads only what it needs)."""
    from benchwright.stages import finish, operations, steps

    if name not in STAGE_ORDER:
        raise KeyError(f"unknown stage {name!r} (one of {', '.join(STAGE_ORDER)})")
    module = {"finish_run": finish, "check_operations": operations}.get(name, steps)
    fn: Stage = getattr(module, name)
    return fn


__all__ = [
    "ASL_STATE_NAMES",
    "CELL_STAGES",
    "STAGE_ORDER",
    "FinishState",
    "Providers",
    "RunState",
    "RunStatus",
    "Stage",
    "asl_state_name",
    "stage_function",
    "utcnow",
]
