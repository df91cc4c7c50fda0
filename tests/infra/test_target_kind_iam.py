"""Each registered AWS target kind's IAM actions are granted by the stack, read from its descriptor:
its listing and deletion to the janitor's role (Sweep), its deletion to Teardown's run-scoped role
(run_session.teardown_actions, infra/isolation.py), and the rest (describe, create, modify, events,
operations) to the stages that call them (infra/permissions.py). Read from infra/permissions.py's
grant functions without a synth: they are the statements the stack attaches
(tests/infra/test_stack.py). The contract: every action a kind declares is one its code (or the shared
provider code it uses) calls, and the stack grants exactly the actions it granted when the lists were
written by hand."""

from __future__ import annotations

import fnmatch
import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from botocore import xform_name

from benchwright.providers.aws.run_session import operations_actions, teardown_actions
from benchwright.providers.aws.targets.kinds import FOLDERS, IAM_FIELDS, iam_actions, kinds

AWS = Path(__file__).resolve().parents[2] / "src" / "benchwright" / "providers" / "aws"


class Role:
    """Stands where a Lambda function is passed: keeps the actions of each statement added to it."""

    def __init__(self) -> None:
        self.actions: set[str] = set()

    def add_to_role_policy(self, statement: Any) -> None:
        self.actions.update(statement.actions)


def granted(*grants: Any) -> set[str]:
    role = Role()
    for grant in grants:
        grant(role)
    return role.actions


def allowed(action: str, actions: set[str]) -> bool:
    return any(fnmatch.fnmatchcase(action.lower(), g.lower()) for g in actions)


@pytest.mark.parametrize("name", sorted(kinds()))
def test_each_kinds_actions_are_granted_to_the_roles_that_list_and_delete(name: str) -> None:
    from infra import permissions

    kind = kinds()[name]
    janitor_role = granted(permissions._describe, permissions._delete, permissions._janitor)
    teardown_role = set(teardown_actions())
    missing = [a for a in (*kind.iam_list, *kind.iam_delete) if not allowed(a, janitor_role)]
    assert not missing, f"{name}: the janitor's role lacks {missing}"
    missing = [a for a in kind.iam_delete if not allowed(a, teardown_role)]
    assert not missing, f"{name}: Teardown's role lacks {missing}"


@pytest.mark.parametrize("name", sorted(kinds()))
def test_each_kinds_other_actions_are_granted_to_the_stages_that_call_them(name: str) -> None:
    from infra import permissions

    kind = kinds()[name]
    checks = {  # the field -> what the stack grants for it
        "iam_describe": granted(permissions._describe),
        "iam_create": set(permissions.CREATE),
        "iam_modify": set(permissions.MODIFY),
        "iam_events": granted(permissions._events),
        "iam_operations": set(permissions.OPERATIONS),
        "iam_operations_delete": set(operations_actions()),
    }
    for field, grants in checks.items():
        missing = [a for a in getattr(kind, field) if not allowed(a, grants)]
        assert not missing, f"{name}.{field}: not granted {missing}"


# What the stack granted when these lists were written by hand (infra/permissions.py, run_session.py):
# reading them from the descriptors changed no grant. A kind added later adds to these on purpose.
GRANTED = {
    "DESCRIBE": {
        "rds:DescribeDBInstances", "rds:DescribeDBClusters", "rds:DescribeDBParameterGroups",
        "rds:DescribeDBClusterParameterGroups", "rds:DescribeDBSnapshots", "rds:DescribeDBClusterSnapshots",
        "rds:ListTagsForResource",
        "elasticache:DescribeReplicationGroups", "elasticache:DescribeCacheClusters",
        "elasticache:ListTagsForResource", "elasticache:DescribeCacheParameterGroups",
        "memorydb:DescribeClusters", "memorydb:ListTags", "memorydb:DescribeParameterGroups",
        "ec2:DescribeInstances", "ec2:DescribeInstanceStatus", "ec2:DescribeSubnets",
        "ec2:DescribeNetworkInterfaces", "ec2:DescribeAvailabilityZones",
    },
    "CREATE": {
        "rds:CreateDBInstance", "rds:CreateDBCluster", "rds:CreateDBParameterGroup",
        "rds:CreateDBClusterParameterGroup", "rds:AddTagsToResource",
        "elasticache:CreateReplicationGroup", "elasticache:CreateCacheParameterGroup",
        "elasticache:AddTagsToResource", "memorydb:CreateCluster", "memorydb:CreateParameterGroup",
        "memorydb:TagResource",
        "ec2:RunInstances", "ec2:CreateNetworkInterface", "ec2:CreateTags",
    },
    "MODIFY": {
        "rds:ModifyDBParameterGroup", "rds:ModifyDBClusterParameterGroup",
        "elasticache:ModifyCacheParameterGroup", "memorydb:UpdateParameterGroup",
    },
    "DELETE": {
        "rds:DeleteDBInstance", "rds:DeleteDBCluster", "rds:DeleteDBParameterGroup",
        "rds:DeleteDBClusterParameterGroup", "rds:DeleteDBSnapshot", "rds:DeleteDBClusterSnapshot",
        "elasticache:DeleteReplicationGroup",
        "elasticache:DeleteCacheParameterGroup", "memorydb:DeleteCluster", "memorydb:DeleteParameterGroup",
        "ec2:TerminateInstances", "ec2:DeleteNetworkInterface", "ecs:StopTask",
    },
    "EVENTS": {
        "rds:RebootDBInstance", "rds:FailoverDBCluster", "rds:ModifyDBInstance",
        "elasticache:TestFailover", "elasticache:RebootCacheCluster", "elasticache:ModifyReplicationGroup",
        "memorydb:FailoverShard", "memorydb:UpdateCluster", "ec2:RebootInstances",
    },
    "OPERATIONS": {
        "rds:CreateDBSnapshot", "rds:CreateDBClusterSnapshot", "rds:RestoreDBInstanceFromDBSnapshot",
        "rds:RestoreDBInstanceToPointInTime", "rds:RestoreDBClusterFromSnapshot",
        "rds:RestoreDBClusterToPointInTime", "rds:CreateDBInstance", "rds:AddTagsToResource",
        "ec2:RunInstances", "ec2:CreateNetworkInterface", "ec2:CreateTags",
    },
    "OPERATIONS_ACTIONS": {
        "secretsmanager:GetSecretValue",
        "rds:DeleteDBInstance", "rds:DeleteDBCluster", "rds:DeleteDBSnapshot", "rds:DeleteDBClusterSnapshot",
        "ec2:TerminateInstances",
    },
}  # fmt: skip


def test_the_stack_grants_what_it_granted_when_the_lists_were_written_by_hand() -> None:
    from infra import permissions

    derived = {name: getattr(permissions, name) for name in GRANTED if hasattr(permissions, name)}
    derived["OPERATIONS_ACTIONS"] = operations_actions()
    for name, actions in derived.items():
        assert len(actions) == len(set(actions)), f"{name}: an action twice"
        assert set(actions) == GRANTED[name], name
    # a run's teardown deletes (through its run session) everything a sweeper deletes of a lost run
    assert sorted(teardown_actions()) == sorted(permissions.DELETE)


def test_iam_actions_is_the_union_in_registry_order_each_once() -> None:
    declared = [a for kind in kinds().values() for a in kind.iam_describe]
    assert iam_actions("iam_describe") == list(dict.fromkeys(declared))
    with pytest.raises(ValueError, match="IAM field"):
        iam_actions("resources")


# Granted with the create that carries the tags (CreateDBInstance's Tags, RunInstances'
# TagSpecifications): IAM authorizes the tagging as its own action, no call of ours names it.
TAGGING_ON_CREATE = {"rds:AddTagsToResource", "elasticache:AddTagsToResource", "memorydb:TagResource",
                     "ec2:CreateTags"}  # fmt: skip
# Granted beside a read that is called, though no call of today's code needs them; kept so that
# deriving the grants from the descriptors changed none. Not to grow.
NOT_CALLED = {"ec2:DescribeInstanceStatus", "elasticache:DescribeCacheClusters"}


def _calls_in(paths: list[Path]) -> set[str]:
    """The boto3 method names (and paginated operation names) a set of modules mentions."""
    return {word for path in paths for word in re.findall(r"\b[a-z][a-z0-9_]+\b", path.read_text())}


def _kind_in(folder: str) -> Any:
    return importlib.import_module(f"benchwright.providers.aws.targets.kinds.{folder}.kind").KIND


def _shared_code() -> list[Path]:
    return [p for p in AWS.rglob("*.py") if "kinds" not in p.relative_to(AWS).parts]


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_action_a_kind_declares_is_one_its_code_calls(folder: str) -> None:
    """A kind's folder, or the shared provider code outside every kind's folder (deletion.py,
    operations.py, launcher.py, cache_params.py ...), calls each action the kind declares: no grant
    for a call nobody makes."""
    kind = _kind_in(folder)
    words = _calls_in([*(AWS / "targets" / "kinds" / folder).rglob("*.py"), *_shared_code()])
    declared = {a for field in IAM_FIELDS for a in getattr(kind, field)}
    uncalled = sorted(
        a for a in declared - TAGGING_ON_CREATE - NOT_CALLED if xform_name(a.split(":", 1)[1]) not in words
    )
    assert not uncalled, f"{folder}: declares {uncalled}, which no code of it calls"


def test_the_grants_without_a_call_really_have_none() -> None:
    """When code starts calling one of ``NOT_CALLED``, it leaves that list."""
    words = _calls_in(list(AWS.rglob("*.py")))
    assert not {a for a in NOT_CALLED if xform_name(a.split(":", 1)[1]) in words}


# the services a kind's own code calls (a kind with another adds it here)
SERVICES = ("rds", "ec2", "elasticache", "memorydb", "ecs")


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_call_in_a_kinds_folder_is_declared_by_the_kind(folder: str) -> None:
    """The other way round: every API call its own folder's code makes (a method, or a paginated
    operation's name, of the AWS services its kinds use) is among the kind's IAM actions, so the
    stack, which grants the union of the descriptors, grants it (test_iam_coverage.py then holds the
    synthesized roles to what the moto runs really call)."""
    import botocore.session

    session = botocore.session.get_session()
    operations: dict[str, set[str]] = {}
    for service in SERVICES:
        for operation in session.get_service_model(service).operation_names:
            operations.setdefault(xform_name(operation), set()).add(f"{service}:{operation}")
    source = "".join(p.read_text() for p in (AWS / "targets" / "kinds" / folder).rglob("*.py"))
    called = {w for w in re.findall(r'[."]([a-z][a-z0-9_]+)\b', source) if w in operations}
    kind = _kind_in(folder)
    declared = {a for field in IAM_FIELDS for a in getattr(kind, field)}
    undeclared = sorted(w for w in called if not operations[w] & declared)
    assert not undeclared, f"{folder}: calls {undeclared} but its descriptor declares no such action"
    if kind.provider is not None and kind.resources:
        assert called, f"{folder}: no call found (the pattern no longer reads its code)"
