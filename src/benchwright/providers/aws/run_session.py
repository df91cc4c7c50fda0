"""Run-scoped sessions (issue 30 item 5): the per-run work acts as ``<role>`` tagged with its run.

The stack's standing roles serve every run at once, so their policies can only say "a resource of
SOME run". The runner (reading its run's database secret, its plan, writing its output) and the
Teardown stage (deleting a run's resources) instead assume a run-scoped role (infra/isolation.py)
with the session tag ``benchwright:run-id``; that role's statements compare every resource's run tag
with the session's, so a session of run A is denied run B's secret, prefix and targets whatever
handle or ARN it is given.

A session of a role assumed from another role's session (ECS task credentials, an instance profile,
a Lambda's role) is role chaining, which AWS caps at one hour; a runner measures for longer, so the
credentials refresh themselves before they expire (botocore's own assume-role fetcher, which asks
again with the same tags).
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.errors import SpecError
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.names import RUN_ID_TAG

RUN_ROLE_ENV = "BENCHWRIGHT_RUN_ROLE_ARN"  # the runner's run-scoped role (set by the launcher)
RUN_ID_ENV = "BENCHWRIGHT_RUN_ID"  # the run the runner serves: the session's tag
# what a teardown deletes or stops through its run session (infra/isolation.py grants exactly these)
TEARDOWN_ACTIONS = [
    "rds:DeleteDBInstance", "rds:DeleteDBCluster", "rds:DeleteDBParameterGroup",
    "rds:DeleteDBClusterParameterGroup", "rds:DeleteDBSnapshot", "rds:DeleteDBClusterSnapshot",
    "elasticache:DeleteReplicationGroup", "elasticache:DeleteCacheParameterGroup",
    "memorydb:DeleteCluster", "memorydb:DeleteParameterGroup",
    "ec2:TerminateInstances", "ecs:StopTask",
]  # fmt: skip
# IAM's session tag values: up to 256 of letters, digits, spaces and _.:/=+-@ (run ids are far narrower)
_TAG_VALUE = re.compile(r"[A-Za-z0-9_.:/=+\-@]{1,256}")
_SESSION_NAME_UNSAFE = re.compile(r"[^\w+=,.@-]")
SESSION_SECONDS = 3600  # role chaining's maximum


def run_tags(run_id: str) -> list[dict[str, str]]:
    """The session tags of one run's session; a run id IAM would refuse is refused here, by name."""
    if not isinstance(run_id, str) or not _TAG_VALUE.fullmatch(run_id):
        raise SpecError("run_id", f"not usable as the session tag {RUN_ID_TAG}: {run_id!r}")
    return [{"Key": RUN_ID_TAG, "Value": run_id}]


def assume_role_args(role_arn: str, run_id: str, who: str) -> dict[str, Any]:
    """AssumeRole's arguments for ``who`` (runner, teardown) serving ``run_id``. The tag is not
    transitive: a run session has no reason to assume another role."""
    name = _SESSION_NAME_UNSAFE.sub("_", f"bw-{who}-{run_id}")[:64]
    return {
        "RoleArn": role_arn,
        "RoleSessionName": name,
        "Tags": run_tags(run_id),
        "DurationSeconds": SESSION_SECONDS,
    }


def run_session(role_arn: str, run_id: str, who: str, base: Any = None, region: str | None = None) -> Any:
    """A boto3 session acting as ``role_arn`` tagged with ``run_id``; its credentials are fetched on
    first use and again before they expire, from ``base``'s (the standing principal's) credentials."""
    import boto3
    import botocore.session
    from botocore.credentials import (
        AssumeRoleCredentialFetcher,
        CredentialProvider,
        CredentialResolver,
        DeferredRefreshableCredentials,
    )

    source = base or boto3.session.Session(region_name=region)
    args = assume_role_args(role_arn, run_id, who)
    fetcher = AssumeRoleCredentialFetcher(
        client_creator=source._session.create_client,  # the source session's own client factory
        source_credentials=source.get_credentials(),
        role_arn=role_arn,
        extra_args={k: v for k, v in args.items() if k != "RoleArn"},
    )
    credentials = DeferredRefreshableCredentials(
        refresh_using=fetcher.fetch_credentials, method="benchwright-run-session"
    )

    class _RunProvider(CredentialProvider):  # type: ignore[misc]
        METHOD = "benchwright-run-session"

        def load(self) -> Any:
            return credentials

    core = botocore.session.Session()
    core.register_component("credential_provider", CredentialResolver(providers=[_RunProvider()]))
    return boto3.session.Session(botocore_session=core, region_name=region or source.region_name)


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


class RunScopedClients(Clients):
    """``Clients`` whose deleting calls (``actions``) go through a run session: describing, reading
    metrics and looking at runners stay with the standing role, while what destroys is decided by
    the run-scoped role's tag conditions, so a handle naming another run's resource is denied."""

    def __init__(self, standing: Clients, session: Any, actions: list[str] = TEARDOWN_ACTIONS) -> None:
        super().__init__(standing.settings, session=session)
        self._standing = standing
        self._actions = list(actions)

    def __call__(self, service: str) -> Any:
        operations = operation_names(self._actions, service)
        if not operations:
            return self._standing(service)
        return _Routed(self._standing(service), super().__call__(service), operations)


def teardown_clients(standing: Clients, run_id: str) -> Clients:
    """The teardown's clients for ``run_id``: deletes through a session of the stage's
    ``teardown_run_role_arn`` tagged with the run; without one (a stack before run-scoped roles, a
    test) the standing clients, as before."""
    role = standing.settings.teardown_run_role_arn
    if not role:
        return standing
    from benchwright.providers.aws.common import shared_session

    session = run_session(role, run_id, "teardown", base=shared_session(), region=standing.settings.region)
    return RunScopedClients(standing, session)
