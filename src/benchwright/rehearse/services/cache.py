"""ElastiCache and MemoryDB inside the moto server: CreateReplicationGroup starts a Redis stand-in on 127.0.0.1 (no
AUTH, as a group without an auth token; TLS only with the rehearsal's certificate when the group has
in-transit encryption, see tls.py) with its AWS/ElastiCache series; the primary endpoint is
127.0.0.1; the group is ``creating`` until Redis answers PING; DeleteReplicationGroup deletes it.
MemoryDB CreateCluster / DeleteCluster do the same (TLS, MemoryDB's default, unless the cluster turns
it off).

A replication group or cluster created with a parameter group (cache_api.py answers those calls) gets
its values on the stand-in with CONFIG SET once Redis answers, before it reads ``available``; the
event log says what was applied, and, when the cluster is deleted, what the server still had (CONFIG
GET), so a rehearsal shows the setting was on the server the runner measured."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from benchwright.rehearse.metrics import CreditModel
from benchwright.rehearse.services.cache_api import groups

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


def install(hooks: Hooks) -> None:
    from moto.elasticache.models import ElastiCacheBackend

    create = ElastiCacheBackend.__dict__["create_replication_group"]
    delete = ElastiCacheBackend.__dict__["delete_replication_group"]

    def patched_create(backend: Any, replication_group_id: str, *args: Any, **kwargs: Any) -> Any:
        fresh = replication_group_id not in backend.replication_groups
        group = create(backend, replication_group_id, *args, **kwargs)
        if fresh:
            node_type = str(getattr(group, "cache_node_type", ""))
            tls = bool(getattr(group, "transit_encryption_enabled", False))
            parameters = _parameters(backend, kwargs.get("cache_parameter_group_name"))
            server = start_redis(hooks, replication_group_id, node_type, tls, parameters=parameters)
            port = int(server.handle["port"])
            for node_group in group.node_groups:
                node_group["primary_endpoint_address"] = "127.0.0.1"
                node_group["port"] = port
                node_group["primary_endpoint"] = {"address": "127.0.0.1", "port": port}
            group.status = "creating"
            hooks.instances[replication_group_id] = group
            watch_ready(hooks, replication_group_id, server)
        return group

    def patched_delete(backend: Any, replication_group_id: str, *args: Any, **kwargs: Any) -> Any:
        deleted = delete(backend, replication_group_id, *args, **kwargs)
        if replication_group_id in hooks.standins:
            report_parameters(hooks, replication_group_id)
            hooks.stop_standin(replication_group_id)
            backend.replication_groups.pop(replication_group_id, None)  # moto keeps it "deleting" forever
        return deleted

    hooks.patch(ElastiCacheBackend, "create_replication_group", patched_create)
    hooks.patch(ElastiCacheBackend, "delete_replication_group", patched_delete)
    _install_memorydb(hooks)


def _install_memorydb(hooks: Hooks) -> None:
    """CreateCluster: the same Redis stand-in (TLS unless the cluster turns it off, as MemoryDB does;
    open access, no password); its cluster endpoint is 127.0.0.1. DeleteCluster deletes it."""
    from moto.memorydb.models import MemoryDBBackend

    create = MemoryDBBackend.__dict__["create_cluster"]
    delete = MemoryDBBackend.__dict__["delete_cluster"]

    def patched_create(backend: Any, cluster_name: str, *args: Any, **kwargs: Any) -> Any:
        fresh = cluster_name not in backend.clusters
        cluster = create(backend, cluster_name, *args, **kwargs)
        if fresh:
            tls = kwargs.get("tls_enabled") is not False
            parameters = _parameters(backend, kwargs.get("parameter_group_name"))
            node_type = str(kwargs.get("node_type") or "")
            server = start_redis(hooks, cluster_name, node_type, tls, "AWS/MemoryDB", parameters)
            cluster.cluster_endpoint = {"Address": "127.0.0.1", "Port": int(server.handle["port"])}
            _zones_of_subnet_group(backend, cluster)
            cluster.status = "creating"
            hooks.instances[cluster_name] = cluster
            watch_ready(hooks, cluster_name, server)
        return cluster

    def patched_delete(backend: Any, cluster_name: str, *args: Any, **kwargs: Any) -> Any:
        report_parameters(hooks, cluster_name)
        deleted = delete(backend, cluster_name, *args, **kwargs)
        hooks.stop_standin(cluster_name)
        return deleted

    hooks.patch(MemoryDBBackend, "create_cluster", patched_create)
    hooks.patch(MemoryDBBackend, "delete_cluster", patched_delete)


def _zones_of_subnet_group(backend: Any, cluster: Any) -> None:
    """MemoryDB places a cluster's nodes in its subnet group's zones; moto picks any of a-d, where the
    rehearsal account may have no subnet (a ``same-az`` runner could not be placed)."""
    group = backend.subnet_groups.get(getattr(cluster, "subnet_group_name", None) or "")
    zones = sorted({s.availability_zone for s in group.subnets}) if group is not None else []
    zones = zones or [f"{backend.region_name}a"]
    for shard in getattr(cluster, "shards", None) or []:
        for index, node in enumerate(shard.get("Nodes") or []):
            node["AvailabilityZone"] = zones[index % len(zones)]


def _parameters(backend: Any, group_name: Any) -> dict[str, str]:
    """The values of the parameter group a cluster is created with (none for a default group)."""
    group = groups(backend).get(str(group_name)) if group_name else None
    return dict(group.parameters) if group is not None else {}


def watch_ready(hooks: Hooks, ident: str, server: Any) -> None:
    """``creating`` until the stand-in answers (its group's values applied), then say what was applied."""

    def watch() -> None:
        hooks.ready(ident, server)
        if server.parameters:
            hooks.events.append(
                f"parameter group of {ident} on its stand-in: applied (CONFIG SET) {server.applied or '{}'}; "
                f"not applied {server.not_applied or '{}'}"
            )

    threading.Thread(target=watch, name=f"ready-{ident}", daemon=True).start()


def report_parameters(hooks: Hooks, ident: str) -> None:
    """Before a stand-in is deleted: its group's values as the server has them now (CONFIG GET)."""
    server = hooks.standins.get(ident)
    if server is None or not getattr(server, "applied", None):
        return
    try:
        found = server.config_get(sorted(server.applied))
        hooks.events.append(f"stand-in of {ident} at deletion: CONFIG GET {found}")
    except Exception as exc:  # reported: the stand-in may be down (a restart, a kill)
        hooks.events.append(
            f"stand-in of {ident} at deletion: CONFIG GET failed: {type(exc).__name__}: {exc}"
        )


def start_redis(
    hooks: Hooks,
    ident: str,
    node_type: str,
    tls: bool,
    namespace: str = "AWS/ElastiCache",
    parameters: dict[str, str] | None = None,
) -> Any:
    """The stand-in (a started server; the caller watches it become ready), TLS only when the group
    has in-transit encryption, with its parameter group's values."""
    from benchwright.rehearse.standins import NoAuthRedis, TlsRedis, local_target

    server = (
        TlsRedis(local_target("redis"), run_id=ident, tls=hooks.tls_material(), parameters=parameters)
        if tls
        else NoAuthRedis(local_target("redis"), run_id=ident, parameters=parameters)
    )
    server.create()
    hooks.standins[ident] = server
    model = CreditModel(instance_class=node_type, storage_type="memory", size_gb=0)
    dimension = "ClusterName" if namespace == "AWS/MemoryDB" else "ReplicationGroupId"
    hooks.publish(ident, namespace, {dimension: ident}, server, model)
    hooks.events.append(
        f"stand-in redis{' (TLS)' if tls else ''} for {ident} on 127.0.0.1:{server.handle['port']}"
    )
    return server
