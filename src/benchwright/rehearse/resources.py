"""What exists in the rehearsal's account, by kind: taken before the runs and after them.

``snapshot(account, before)`` lists what the runs left: DB instances, clusters and snapshots, cache
clusters and replication groups, MemoryDB clusters, parameter groups (RDS, Aurora, ElastiCache,
MemoryDB), ECS tasks not stopped, EC2 instances not terminated, secrets
created during the run, and S3 objects outside the results bucket or under its scratch prefix
(plans). The run record, result documents and report in the results bucket are the run's output, not
a leak; they are listed under ``results`` for reference. Each service is listed on its own (the
tagging API misses MemoryDB).
"""

from __future__ import annotations

from typing import Any

from benchwright.rehearse.account import Account

LEAK_KINDS = (
    "db_instances",
    "db_clusters",
    "db_snapshots",
    "cache_clusters",
    "replication_groups",
    "memorydb_clusters",
    "parameter_groups",
    "tasks",
    "instances",
    "secrets",
    "objects",
)


def _paged(client: Any, op: str, key: str, **kwargs: Any) -> list[Any]:
    out: list[Any] = []
    for page in client.get_paginator(op).paginate(**kwargs):
        out.extend(page.get(key, []))
    return out


def parameter_groups(account: Account) -> list[str]:
    """Every parameter group but the services' defaults, as ``service:name``."""
    rds = account.client("rds")
    names = [
        f"rds:{g['DBParameterGroupName']}"
        for g in _paged(rds, "describe_db_parameter_groups", "DBParameterGroups")
    ]
    names += [
        f"rds-cluster:{g['DBClusterParameterGroupName']}"
        for g in _paged(rds, "describe_db_cluster_parameter_groups", "DBClusterParameterGroups")
    ]
    cache = account.client("elasticache").describe_cache_parameter_groups().get("CacheParameterGroups", [])
    names += [f"elasticache:{g['CacheParameterGroupName']}" for g in cache]
    memorydb = account.client("memorydb").describe_parameter_groups().get("ParameterGroups", [])
    names += [f"memorydb:{g['Name']}" for g in memorydb]
    return [n for n in names if not n.split(":", 1)[1].startswith("default.")]


def snapshot(account: Account, before: dict[str, list[Any]] | None = None) -> dict[str, list[Any]]:
    rds = account.client("rds")
    now: dict[str, list[Any]] = {
        "db_instances": [
            d["DBInstanceIdentifier"] for d in _paged(rds, "describe_db_instances", "DBInstances")
        ],
        "db_clusters": [c["DBClusterIdentifier"] for c in _paged(rds, "describe_db_clusters", "DBClusters")],
        "db_snapshots": [  # manual ones: the operation benchmarks' (automated backups go with the instance)
            *(
                s["DBSnapshotIdentifier"]
                for s in _paged(rds, "describe_db_snapshots", "DBSnapshots", SnapshotType="manual")
            ),
            *(
                s["DBClusterSnapshotIdentifier"]
                for s in _paged(
                    rds, "describe_db_cluster_snapshots", "DBClusterSnapshots", SnapshotType="manual"
                )
            ),
        ],
    }
    cache = account.client("elasticache")
    now["cache_clusters"] = [
        c["CacheClusterId"] for c in _paged(cache, "describe_cache_clusters", "CacheClusters")
    ]
    now["replication_groups"] = [
        g["ReplicationGroupId"] for g in _paged(cache, "describe_replication_groups", "ReplicationGroups")
    ]
    now["memorydb_clusters"] = [
        c["Name"] for c in account.client("memorydb").describe_clusters().get("Clusters", [])
    ]
    now["parameter_groups"] = parameter_groups(account)
    ecs = account.client("ecs")
    tasks = ecs.list_tasks(cluster=account.cluster).get("taskArns", []) if account.cluster else []
    live = []
    if tasks:
        for task in ecs.describe_tasks(cluster=account.cluster, tasks=tasks).get("tasks", []):
            if task.get("lastStatus") != "STOPPED":
                live.append(task["taskArn"])
    now["tasks"] = live
    ec2 = account.client("ec2")
    now["instances"] = [
        i["InstanceId"]
        for r in _paged(ec2, "describe_instances", "Reservations")
        for i in r["Instances"]
        if i["State"]["Name"] not in {"terminated", "shutting-down"}
    ]
    now["secrets"] = [
        s["ARN"] for s in _paged(account.client("secretsmanager"), "list_secrets", "SecretList")
    ]
    s3 = account.client("s3")
    objects: list[str] = []
    results: list[str] = []
    for bucket in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]:
        for item in _paged(s3, "list_objects_v2", "Contents", Bucket=bucket):
            uri = f"s3://{bucket}/{item['Key']}"
            if bucket == account.bucket and not item["Key"].startswith("plans/"):
                results.append(uri)
            else:
                objects.append(uri)
    now["objects"] = objects
    if before is None:
        now["results"] = results
        return now
    left = {kind: [x for x in now[kind] if x not in before.get(kind, [])] for kind in LEAK_KINDS}
    left["results"] = [x for x in results if x not in before.get("results", [])]
    return left
