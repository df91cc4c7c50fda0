"""ElastiCache and MemoryDB inside the moto server: CreateReplicationGroup starts a Redis stand-in on 127.0.0.1 (no
AUTH, as a group without an auth token; TLS only with the rehearsal's certificate when the group has
in-transit encryption, see tls.py) with its AWS/ElastiCache series; the primary endpoint is
127.0.0.1; the group is ``creating`` until Redis answers PING; DeleteReplicationGroup deletes it.
MemoryDB CreateCluster / DeleteCluster do the same (TLS, MemoryDB's default, unless the cluster turns
it off)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchwright.rehearse.metrics import CreditModel

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
            server = start_redis(hooks, replication_group_id, node_type, tls)
            port = int(server.handle["port"])
            for node_group in group.node_groups:
                node_group["primary_endpoint_address"] = "127.0.0.1"
                node_group["port"] = port
                node_group["primary_endpoint"] = {"address": "127.0.0.1", "port": port}
            group.status = "creating"
            hooks.instances[replication_group_id] = group
            hooks.watch_ready(replication_group_id, server)
        return group

    def patched_delete(backend: Any, replication_group_id: str, *args: Any, **kwargs: Any) -> Any:
        deleted = delete(backend, replication_group_id, *args, **kwargs)
        if replication_group_id in hooks.standins:
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
            server = start_redis(hooks, cluster_name, str(kwargs.get("node_type") or ""), tls, "AWS/MemoryDB")
            cluster.cluster_endpoint = {"Address": "127.0.0.1", "Port": int(server.handle["port"])}
            cluster.status = "creating"
            hooks.instances[cluster_name] = cluster
            hooks.watch_ready(cluster_name, server)
        return cluster

    def patched_delete(backend: Any, cluster_name: str, *args: Any, **kwargs: Any) -> Any:
        deleted = delete(backend, cluster_name, *args, **kwargs)
        hooks.stop_standin(cluster_name)
        return deleted

    hooks.patch(MemoryDBBackend, "create_cluster", patched_create)
    hooks.patch(MemoryDBBackend, "delete_cluster", patched_delete)


def start_redis(
    hooks: Hooks, ident: str, node_type: str, tls: bool, namespace: str = "AWS/ElastiCache"
) -> Any:
    """The stand-in (a started server; the caller watches it become ready), TLS only when the group
    has in-transit encryption."""
    from benchwright.rehearse.standins import NoAuthRedis, TlsRedis, local_target

    server = (
        TlsRedis(local_target("redis"), run_id=ident, tls=hooks.tls_material())
        if tls
        else NoAuthRedis(local_target("redis"), run_id=ident)
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
