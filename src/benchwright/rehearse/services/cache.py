"""ElastiCache inside the moto server: CreateReplicationGroup starts a Redis stand-in on 127.0.0.1 (no
AUTH, as a group without an auth token; TLS only with the rehearsal's certificate when the group has
in-transit encryption, see tls.py) with its AWS/ElastiCache series; the primary endpoint is
127.0.0.1; the group is ``creating`` until Redis answers PING; DeleteReplicationGroup deletes it.
MemoryDB has no stand-in yet, so a MemoryDB spec is
refused before anything starts (prepare.py, naming ``target.provider``)."""

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


def start_redis(hooks: Hooks, ident: str, node_type: str, tls: bool) -> Any:
    """The stand-in (a started server; the caller watches it become ready), TLS only when the group
    has in-transit encryption."""
    from benchwright.rehearse.standins import NoAuthRedis, TlsRedis

    server = (
        TlsRedis({"settings": {}}, run_id=ident, tls=hooks.tls_material())
        if tls
        else NoAuthRedis({"settings": {}}, run_id=ident)
    )
    server.create()
    hooks.standins[ident] = server
    model = CreditModel(instance_class=node_type, storage_type="memory", size_gb=0)
    hooks.publish(ident, "AWS/ElastiCache", {"ReplicationGroupId": ident}, server, model)
    hooks.events.append(
        f"stand-in redis{' (TLS)' if tls else ''} for {ident} on 127.0.0.1:{server.handle['port']}"
    )
    return server
