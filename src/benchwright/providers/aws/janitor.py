"""Find and delete what runs left behind, by tag: the backstop behind Catch -> Teardown.

Every resource we create carries run id / owner / expires-at tags. The Resource Groups Tagging API
does not cover MemoryDB (and lags for others), so each service we create is listed on its own.
``leftovers(run_id)`` is what the tests use to prove a run left nothing; ``sweep(now)`` is what the
scheduled janitor Lambda runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchwright.providers.aws.common import Clients, paginate
from benchwright.providers.aws.names import EXPIRES_TAG, OWNER_TAG, RESOURCE_PREFIX, RUN_ID_TAG
from benchwright.providers.aws.targets.kinds import resource_kinds


@dataclass(frozen=True)
class Resource:
    kind: str  # rds-instance, rds-cluster, elasticache-replication-group, memorydb-cluster, ec2-instance ...
    id: str
    tags: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def run_id(self) -> str | None:
        return self.tags.get(RUN_ID_TAG)

    def expired(self, now: datetime) -> bool:
        raw = self.tags.get(EXPIRES_TAG)
        if not raw:
            return False
        try:
            return datetime.strptime(raw, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) <= now
        except ValueError:
            return False


def _kv(tags: list[dict[str, str]] | None, key: str = "Key", value: str = "Value") -> dict[str, str]:
    return {t[key]: t.get(value, "") for t in tags or []}


def _ours(tags: dict[str, str]) -> bool:
    return RUN_ID_TAG in tags


# ---------------------------------------------------------------- per-service listing
def _rds(clients: Clients) -> Iterator[Resource]:
    rds = clients("rds")
    for db in paginate(rds, "describe_db_instances", "DBInstances"):
        tags = _kv(db.get("TagList")) or _kv(
            rds.list_tags_for_resource(ResourceName=db["DBInstanceArn"])["TagList"]
        )
        if _ours(tags) and db.get("DBInstanceStatus") != "deleting":
            member = {"cluster": db["DBClusterIdentifier"]} if db.get("DBClusterIdentifier") else {}
            yield Resource("rds-instance", db["DBInstanceIdentifier"], tags, member)
    for cluster in paginate(rds, "describe_db_clusters", "DBClusters"):
        tags = _kv(cluster.get("TagList")) or _kv(
            rds.list_tags_for_resource(ResourceName=cluster["DBClusterArn"])["TagList"]
        )
        if _ours(tags) and cluster.get("Status") != "deleting":
            yield Resource("rds-cluster", cluster["DBClusterIdentifier"], tags)
    yield from _rds_snapshots(rds)
    for group in paginate(rds, "describe_db_parameter_groups", "DBParameterGroups"):
        if not group["DBParameterGroupName"].startswith("bw-"):
            continue
        tags = _kv(rds.list_tags_for_resource(ResourceName=group["DBParameterGroupArn"])["TagList"])
        if _ours(tags):
            yield Resource("rds-parameter-group", group["DBParameterGroupName"], tags)
    for group in paginate(rds, "describe_db_cluster_parameter_groups", "DBClusterParameterGroups"):
        if not group["DBClusterParameterGroupName"].startswith("bw-"):
            continue
        tags = _kv(rds.list_tags_for_resource(ResourceName=group["DBClusterParameterGroupArn"])["TagList"])
        if _ours(tags):
            yield Resource("rds-cluster-parameter-group", group["DBClusterParameterGroupName"], tags)


def _rds_snapshots(rds: Any) -> Iterator[Resource]:
    """Manual snapshots the operation benchmarks take (snapshot_restore), by their run tag."""
    for kind, op, key, ident, arn in (
        ("rds-snapshot", "describe_db_snapshots", "DBSnapshots", "DBSnapshotIdentifier", "DBSnapshotArn"),
        ("rds-cluster-snapshot", "describe_db_cluster_snapshots", "DBClusterSnapshots",
         "DBClusterSnapshotIdentifier", "DBClusterSnapshotArn"),
    ):  # fmt: skip
        for snap in paginate(rds, op, key, SnapshotType="manual"):
            if not str(snap.get(ident, "")).startswith("bw-") or snap.get("Status") == "deleting":
                continue
            tags = _kv(snap.get("TagList")) or _kv(
                rds.list_tags_for_resource(ResourceName=snap[arn])["TagList"]
            )
            if _ours(tags):
                yield Resource(kind, snap[ident], tags)


def _elasticache(clients: Clients) -> Iterator[Resource]:
    client = clients("elasticache")
    for group in paginate(client, "describe_replication_groups", "ReplicationGroups"):
        if group.get("Status") == "deleting" or not group.get("ARN"):
            continue
        tags = _kv(client.list_tags_for_resource(ResourceName=group["ARN"]).get("TagList"))
        if _ours(tags):
            yield Resource("elasticache-replication-group", group["ReplicationGroupId"], tags)
    for params in paginate(client, "describe_cache_parameter_groups", "CacheParameterGroups"):
        if not params["CacheParameterGroupName"].startswith(RESOURCE_PREFIX) or not params.get("ARN"):
            continue  # the service's default.* groups and everyone else's
        tags = _kv(client.list_tags_for_resource(ResourceName=params["ARN"]).get("TagList"))
        if _ours(tags):
            yield Resource("elasticache-parameter-group", params["CacheParameterGroupName"], tags)


def _memorydb(clients: Clients) -> Iterator[Resource]:
    client = clients("memorydb")
    token = None
    while True:
        page = client.describe_clusters(**({"NextToken": token} if token else {}))
        for cluster in page.get("Clusters", []):
            if str(cluster.get("Status", "")).lower() == "deleting":
                continue
            tags = _kv(client.list_tags(ResourceArn=cluster["ARN"]).get("TagList"))
            if _ours(tags):
                yield Resource("memorydb-cluster", cluster["Name"], tags)
        token = page.get("NextToken")
        if not token:
            break
    yield from _memorydb_parameter_groups(client)


def _memorydb_parameter_groups(client: Any) -> Iterator[Resource]:
    token = None
    while True:
        page = client.describe_parameter_groups(**({"NextToken": token} if token else {}))
        for group in page.get("ParameterGroups", []):
            if not group["Name"].startswith(RESOURCE_PREFIX) or not group.get("ARN"):
                continue  # the service's default.* groups and everyone else's
            tags = _kv(client.list_tags(ResourceArn=group["ARN"]).get("TagList"))
            if _ours(tags):
                yield Resource("memorydb-parameter-group", group["Name"], tags)
        token = page.get("NextToken")
        if not token:
            return


def _ec2(clients: Clients) -> Iterator[Resource]:
    ec2 = clients("ec2")
    filters = [{"Name": "tag-key", "Values": [RUN_ID_TAG]}]
    alive = ["pending", "running", "stopping", "stopped"]
    for reservation in paginate(
        ec2,
        "describe_instances",
        "Reservations",
        Filters=[*filters, {"Name": "instance-state-name", "Values": alive}],
    ):
        for instance in reservation["Instances"]:
            yield Resource("ec2-instance", instance["InstanceId"], _kv(instance.get("Tags")))
    for eni in paginate(ec2, "describe_network_interfaces", "NetworkInterfaces", Filters=filters):
        yield Resource("ec2-network-interface", eni["NetworkInterfaceId"], _kv(eni.get("TagSet")))


def _ecs(clients: Clients) -> Iterator[Resource]:
    ecs = clients("ecs")
    for cluster in paginate(ecs, "list_clusters", "clusterArns"):
        arns = list(paginate(ecs, "list_tasks", "taskArns", cluster=cluster, desiredStatus="RUNNING"))
        for i in range(0, len(arns), 100):
            tasks = ecs.describe_tasks(cluster=cluster, tasks=arns[i : i + 100], include=["TAGS"]).get(
                "tasks", []
            )
            for task in tasks:
                tags = _kv(task.get("tags"), "key", "value")
                if _ours(tags) and task.get("lastStatus") != "STOPPED":
                    yield Resource("ecs-task", task["taskArn"], tags, {"cluster": cluster})


LISTERS: dict[str, Callable[[Clients], Iterator[Resource]]] = {
    "rds": _rds,
    "elasticache": _elasticache,
    "memorydb": _memorydb,
    "ec2": _ec2,
    "ecs": _ecs,
}


def find(clients: Clients, services: list[str] | None = None) -> list[Resource]:
    found: list[Resource] = []
    for name in services or list(LISTERS):
        found.extend(LISTERS[name](clients))
    return found


def leftovers(clients: Clients, run_id: str, services: list[str] | None = None) -> list[Resource]:
    """Everything still alive that is tagged with ``run_id``."""
    return [r for r in find(clients, services) if r.run_id == run_id]


# ---------------------------------------------------------------- deleting
Deleter = Callable[[Clients, str, dict[str, str]], bool]

# Each kind the listers find, with its one deletion path (deletion.py, cache_params.py), in the order
# a run's resources are deleted: as each AWS kind declares them (providers/aws/targets/kinds/).
KINDS: dict[str, Deleter] = {resource.name: resource.delete for resource in resource_kinds()}
ORDER: tuple[str, ...] = tuple(KINDS)


def delete(clients: Clients, resource: Resource) -> bool:
    """Delete one resource through its kind's path; True when it is gone or going (already gone
    included), False when AWS refused (the next sweep finds it again by its tags)."""
    from botocore.exceptions import ClientError

    try:
        deleter = KINDS[resource.kind]
    except KeyError:
        raise ValueError(f"no deletion path for resource kind {resource.kind!r}") from None
    try:
        return deleter(clients, resource.id, resource.extra)
    except ClientError:
        return False


def in_deletion_order(resources: list[Resource]) -> list[Resource]:
    return sorted(resources, key=lambda r: ORDER.index(r.kind))


def delete_run(clients: Clients, run_id: str) -> list[Resource]:
    """Delete everything of one run (instances before their parameter groups); returns what remains."""
    for resource in in_deletion_order(leftovers(clients, run_id)):
        with contextlib.suppress(Exception):
            delete(clients, resource)
    return leftovers(clients, run_id)


def of_run(resource_run_id: str | None, run_id: str) -> bool:
    """True for ``run_id`` itself and for its suite cells (``<run id>-NNN``, see suite.cell_run_id)."""
    if not resource_run_id or not run_id:
        return False
    if resource_run_id == run_id:
        return True
    rest = resource_run_id.removeprefix(f"{run_id}-")
    return rest != resource_run_id and len(rest) == 3 and rest.isdigit()


def sweep_run(clients: Clients, run_id: str, dry_run: bool = False) -> SweepReport:
    """Delete, now, everything tagged with one run (and its suite cells), expired or not: what the
    API's cancel asks for, since a stopped execution never reaches its own Teardown."""
    found = in_deletion_order([r for r in find(clients) if of_run(r.run_id, run_id)])
    report = SweepReport()
    for resource in found:
        label = f"{resource.kind}:{resource.id}"
        ok = True
        if not dry_run:
            try:
                ok = delete(clients, resource)
            except Exception:  # one stubborn resource must not stop the rest of the sweep
                ok = False
        (report.deleted if ok else report.failed).append(label)
    return report


@dataclass
class SweepReport:
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # not expired yet
    failed: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)  # expired, but the run's execution still runs
    unchecked: list[str] = field(default_factory=list)  # expired; Step Functions could not be asked

    def as_dict(self) -> dict[str, Any]:
        return {"deleted": self.deleted, "kept": self.kept, "failed": self.failed,
                "running": self.running, "unchecked": self.unchecked}  # fmt: skip


def sweep(
    clients: Clients,
    now: datetime | None = None,
    owner: str | None = None,
    dry_run: bool = False,
    running: Callable[[str | None], bool | None] | None = None,
) -> SweepReport:
    """Delete every tagged resource whose expires-at has passed (optionally only ``owner``'s), unless
    ``running`` says its run's execution still runs (a suite outliving an estimate). When that cannot
    be asked (None), the expires-at tag alone decides, as before: a leak costs, the alarm tells."""
    now = now or datetime.now(UTC)
    report = SweepReport()
    for resource in find(clients):
        label = f"{resource.kind}:{resource.id}"
        if owner and resource.tags.get(OWNER_TAG) != owner:
            continue
        if not resource.expired(now):
            report.kept.append(label)
            continue
        alive = running(resource.run_id) if running is not None else None
        if alive:
            report.running.append(label)
            continue
        if alive is None and running is not None:
            report.unchecked.append(label)
        if dry_run or delete(clients, resource):
            report.deleted.append(label)
        else:
            report.failed.append(label)
    return report
