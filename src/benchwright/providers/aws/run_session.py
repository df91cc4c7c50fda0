"""Run-scoped sessions (issue 30 item 5): the per-run work acts as ``<role>`` tagged with its run.

The stack's standing roles serve every run at once, so their policies can only say "a resource of
SOME run". The runner (reading its run's database secret, its plan, writing its output), the
Teardown stage (deleting a run's resources), the CheckOperations stage (reading the run's master
secret for its probe, deleting what its operations made and node_replace's replaced node) and the
stages that read and write the run's objects in the results bucket (``runs/<run id>/``: plans,
cell documents, metrics, verdicts, the record and report) instead assume a run-scoped role
(infra/isolation.py) with the session tag ``benchwright:run-id``; that role's statements compare
every resource's run tag (or key prefix) with the session's, so a session of run A is denied run
B's secret, prefix and targets whatever handle, ARN or key it is given.

A bucket call goes through the run session by its key: only ``runs/<this run>/...``. The index
keys (``history/``, ``suites/``), the site, and earlier runs' records the verdict reads stay with
the standing role.

A session of a role assumed from another role's session (ECS task credentials, an instance profile,
a Lambda's role) is role chaining, which AWS caps at one hour; a runner measures for longer, so the
credentials refresh themselves before they expire (botocore's own assume-role fetcher, which asks
again with the same tags).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.targets.kinds import iam_actions
from benchwright.runner.aws_session import (  # the session itself lives beside the runner, which uses it too
    RUN_ID_ENV,
    RUN_ROLE_ENV,
    SESSION_SECONDS,
    assume_role_args,
    run_session,
    run_tags,
)

__all__ = [
    "RUN_ID_ENV",
    "RUN_OBJECT_OPERATIONS",
    "RUN_ROLE_ENV",
    "RUN_SCOPED",
    "SESSION_SECONDS",
    "RunScopedClients",
    "assume_role_args",
    "operation_names",
    "operations_actions",
    "run_scoped_clients",
    "run_session",
    "run_tags",
    "teardown_actions",
    "teardown_clients",
]


def teardown_actions() -> list[str]:
    """What a teardown deletes or stops through its run session (infra/isolation.py grants exactly
    these): every AWS kind's ``iam_delete``. Read when asked, so that a stage which makes no run-scoped
    deletes imports no kind's descriptor."""
    return iam_actions("iam_delete")


def operations_actions() -> list[str]:
    """What CheckOperations reads and deletes through its run session (infra/isolation.py grants
    exactly these): the master secret its probe logs in with, and what each kind's operations
    delete again (``iam_operations_delete``: the restored databases and snapshots, node_replace's
    replaced node)."""
    return ["secretsmanager:GetSecretValue", *iam_actions("iam_operations_delete")]


# the S3 operations a stage makes on its run's own keys, through its run session when the key is
# under runs/<run id>/ (HeadObject is authorized as s3:GetObject and ListObjectsV2 as s3:ListBucket:
# these are operations, not IAM actions; infra/isolation.py grants the actions)
RUN_OBJECT_OPERATIONS = ["s3:GetObject", "s3:PutObject", "s3:HeadObject", "s3:ListObjectsV2"]


def _results() -> list[str]:
    return list(RUN_OBJECT_OPERATIONS)


_RESULTS = ("results_run_role_arn", _results)
# stage -> (the AwsSettings field naming its run-scoped role, what goes through that role's session);
# SummarizeSuite and AbortTeardown finish a run through finish_run's clients
RUN_SCOPED: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "teardown": ("teardown_run_role_arn", teardown_actions),
    "check_operations": ("operations_run_role_arn", operations_actions),
    "launch_runner": _RESULTS,
    "check_runner": _RESULTS,
    "collect_metrics": _RESULTS,
    "judge_results": _RESULTS,
    "store_results": _RESULTS,
    "price_run": _RESULTS,
    "finish_run": _RESULTS,
}


def operation_names(actions: list[str], service: str) -> set[str]:
    """The boto3 method names of ``service``'s actions among ``actions`` (``rds:DeleteDBInstance``
    -> ``delete_db_instance``)."""
    from botocore import xform_name

    prefix = f"{service}:"
    return {xform_name(a[len(prefix) :]) for a in actions if a.startswith(prefix)}


class _Routed:
    """One service's client: the run session's for ``operations``, the standing one's otherwise."""

    def __init__(self, standing: Any, run: Any, operations: set[str]) -> None:
        self._standing, self._run, self._operations = standing, run, operations

    def __getattr__(self, name: str) -> Any:
        return getattr(self._run if name in self._operations else self._standing, name)


class _ByKey(_Routed):
    """The S3 client: ``operations`` on a key (or listing prefix) under ``prefix``, the run's own,
    through the run session; on any other key, and every other call (presigning, paginators), the
    standing client."""

    def __init__(self, standing: Any, run: Any, operations: set[str], prefix: str) -> None:
        super().__init__(standing, run, operations)
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name not in self._operations:
            return getattr(self._standing, name)

        def call(**params: Any) -> Any:
            key = str(params.get("Key", params.get("Prefix", "")))
            client = self._run if key.startswith(self._prefix) else self._standing
            return getattr(client, name)(**params)

        return call


class RunScopedClients(Clients):
    """``Clients`` whose run-scoped calls (``actions``) go through a run session: deletes and secret
    reads are decided by the run-scoped role's tag conditions, so a handle naming another run's
    resource is denied; S3 calls on the run's own keys (``runs/<run id>/``) by the role's key
    prefix, so a key of another run is denied. Describing, reading metrics, looking at runners and
    the bucket's other keys stay with the standing role."""

    def __init__(
        self, standing: Clients, session: Any, actions: list[str] | None = None, run_id: str = ""
    ) -> None:
        super().__init__(standing.settings, session=session)
        self._standing = standing
        self._actions = list(teardown_actions() if actions is None else actions)
        self._run_id = run_id

    def __call__(self, service: str) -> Any:
        operations = operation_names(self._actions, service)
        if not operations:
            return self._standing(service)
        if service == "s3":
            prefix = f"runs/{self._run_id}/"
            return _ByKey(self._standing(service), super().__call__(service), operations, prefix)
        return _Routed(self._standing(service), super().__call__(service), operations)


# The run-scoped clients of the last few (stage, run) pairs this process served. A warm Lambda serves
# one run's stage again and again (CheckRunner at every poll, a suite's cells one after another); a
# session and its clients made afresh each time cost more CPU than the stage's own calls. A session's
# credentials refresh themselves (run_session), so a kept one stays valid.
_KEPT: OrderedDict[tuple[int, str, str, str], RunScopedClients] = OrderedDict()
_KEEP = 16
_KEPT_LOCK = threading.Lock()


def run_scoped_clients(standing: Clients, run_id: str, stage: str) -> Clients:
    """``stage``'s clients for ``run_id``: its run-scoped calls (``RUN_SCOPED``) through a session of
    its run role tagged with the run; a stage without one, or a stack that names no such role (a
    stack before run-scoped roles), the standing clients. Kept per (standing clients, stage, run)."""
    field, actions = RUN_SCOPED.get(stage, ("", list))
    role = getattr(standing.settings, field, None) if field else None
    if not role:
        return standing
    key = (id(standing), stage, run_id, str(role))
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None and kept._standing is standing:  # an id is reused only after its object died
            _KEPT.move_to_end(key)
            return kept
    from benchwright.providers.aws.common import shared_session

    who = stage.replace("_", "-")
    session = run_session(role, run_id, who, base=shared_session(), region=standing.settings.region)
    scoped = RunScopedClients(standing, session, actions(), run_id)
    with _KEPT_LOCK:
        _KEPT[key] = scoped
        while len(_KEPT) > _KEEP:
            _KEPT.popitem(last=False)
    return scoped


def teardown_clients(standing: Clients, run_id: str) -> Clients:
    """The teardown's clients for ``run_id`` (``run_scoped_clients`` of the teardown stage)."""
    return run_scoped_clients(standing, run_id, "teardown")
