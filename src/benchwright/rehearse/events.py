"""Events the workflow issues during a rehearsed run: the API call restarts the stand-in server.

When moto receives RebootDBInstance (with ForceFailover or not) for an instance, or FailoverDBCluster
for a cluster, that has a stand-in (hooks.py), the stand-in is restarted on the same port and data
directory: ``failover`` kills its process tree (SIGKILL; the engine recovers from its log, as a
promoted standby replays), a plain reboot stops it cleanly. The runner's clients see a real outage
and reconnect, so the availability analysis measures what it would on AWS (with a stand-in's restart
time, not RDS's 60-120 s). The API call answers at once, as RDS does; the instance reports
``rebooting`` (a cluster ``failing-over``) until the stand-in answers again. Deleting a stand-in
first waits for its restart to end, so no restarted server outlives the rehearsal.

moto's RDS backend drops ForceFailover (its ``reboot_db_instance`` takes the identifier only), so the
flag is read from the request itself. ElastiCache TestFailover and RebootCacheCluster, and MemoryDB
FailoverShard, are answered by services/cache_api.py (moto has none of them); here they restart the
Redis stand-in the same way (a failover SIGKILLs it after a SAVE, as a promoted replica holds the
data; a reboot stops it cleanly), and the replication group or cluster reads ``modifying`` until
the stand-in answers again (with its parameter group re-applied).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks

RESTART_WAIT_S = 120.0  # a stand-in restart ends well within this (startup_timeout_s is 60 s)


class Restarts:
    """The stand-in restarts the rehearsal started, by identifier (one at a time each)."""

    def __init__(self, hooks: Hooks) -> None:
        self.hooks = hooks
        self.running: dict[str, threading.Thread] = {}
        self.lock = threading.Lock()

    def start(self, ident: str, action: str, call: str, set_status: Any) -> None:
        server = self.hooks.standins.get(ident)
        if server is None:
            return
        with self.lock:
            previous = self.running.get(ident)
            if previous is not None and previous.is_alive():
                self.hooks.events.append(f"{call} {ident}: a restart is already under way")
                return
            set_status("rebooting" if action == "reboot" else "failing-over")
            thread = threading.Thread(
                target=self._restart, args=(ident, server, action, call, set_status), daemon=True
            )
            self.running[ident] = thread
            thread.start()

    def _restart(self, ident: str, server: Any, action: str, call: str, set_status: Any) -> None:
        try:
            detail = server.trigger(action)
            self.hooks.events.append(f"{call} {ident}: stand-in restarted ({action}): {detail}")
            set_status("available")
        except Exception as exc:  # reported; the runner's clients will say the server stayed down
            self.hooks.events.append(f"{call} {ident}: stand-in restart failed: {type(exc).__name__}: {exc}")
            set_status("failed")

    def wait(self, ident: str) -> None:
        with self.lock:
            thread = self.running.pop(ident, None)
        if thread is not None:
            thread.join(RESTART_WAIT_S)


def install(hooks: Hooks) -> None:
    """Patch moto's RDS reboot and cluster failover; make stand-in deletion wait for restarts."""
    from moto.rds.models import RDSBackend
    from moto.rds.responses import RDSResponse

    restarts = Restarts(hooks)
    reboot = RDSResponse.__dict__["reboot_db_instance"]
    failover = RDSBackend.__dict__["failover_db_cluster"]

    def instance_status(ident: str) -> Any:
        def set_status(value: str) -> None:
            if ident in hooks.instances:
                hooks.instances[ident].status = value

        return set_status

    def cluster_status(ident: str) -> Any:
        def set_status(value: str) -> None:
            hooks.status[ident] = value

        return set_status

    def patched_reboot(response: Any) -> Any:
        result = reboot(response)  # moto checks the instance exists (and raises if not)
        ident = str(response.params.get("DBInstanceIdentifier"))
        force = str(response.params.get("ForceFailover", "false")).lower() == "true"
        action = "failover" if force else "reboot"
        call = "RebootDBInstance" + (" ForceFailover" if force else "")
        if ident in hooks.standins:
            restarts.start(ident, action, call, instance_status(ident))
        else:  # an Aurora instance: its cluster's stand-in is the writer that reboots
            database = response.backend.databases.get(ident)
            cluster = getattr(database, "db_cluster_identifier", None)
            if cluster:
                restarts.start(str(cluster), action, call, cluster_status(str(cluster)))
        return result

    def patched_failover(backend: Any, db_cluster_identifier: str, *args: Any, **kwargs: Any) -> Any:
        cluster = failover(backend, db_cluster_identifier, *args, **kwargs)
        restarts.start(
            db_cluster_identifier, "failover", "FailoverDBCluster", cluster_status(db_cluster_identifier)
        )
        return cluster

    stop_standin = hooks.stop_standin

    def stop_after_restart(ident: str) -> None:
        restarts.wait(ident)
        stop_standin(ident)

    hooks.patch(RDSResponse, "reboot_db_instance", patched_reboot)
    hooks.patch(RDSBackend, "failover_db_cluster", patched_failover)
    hooks.stop_standin = stop_after_restart  # type: ignore[method-assign]
    _install_cache(hooks, restarts)


def _cache_status(hooks: Hooks, ident: str) -> Any:
    """What a replication group or MemoryDB cluster reads while its stand-in restarts."""

    def set_status(value: str) -> None:
        model = hooks.instances.get(ident)
        if model is not None:
            model.status = value if value in {"available", "failed"} else "modifying"

    return set_status


def _install_cache(hooks: Hooks, restarts: Restarts) -> None:
    """ElastiCache TestFailover / RebootCacheCluster and MemoryDB FailoverShard (services/cache_api.py
    answers them) restart the group's or cluster's stand-in."""
    from moto.elasticache.models import ElastiCacheBackend
    from moto.memorydb.models import MemoryDBBackend

    test_failover = ElastiCacheBackend.__dict__["test_failover"]
    reboot_cluster = ElastiCacheBackend.__dict__["reboot_cache_cluster"]
    failover_shard = MemoryDBBackend.__dict__["failover_shard"]

    def patched_test_failover(backend: Any, replication_group_id: str, node_group_id: str) -> Any:
        group = test_failover(backend, replication_group_id, node_group_id)
        call = f"TestFailover {node_group_id}"
        restarts.start(replication_group_id, "failover", call, _cache_status(hooks, replication_group_id))
        return group

    def patched_reboot(backend: Any, cache_cluster_id: str, node_ids: list[str]) -> Any:
        cluster = reboot_cluster(backend, cache_cluster_id, node_ids)
        group_id = str(cluster.get("ReplicationGroupId") or cache_cluster_id)
        restarts.start(
            group_id, "reboot", f"RebootCacheCluster {cache_cluster_id}", _cache_status(hooks, group_id)
        )
        return cluster

    def patched_failover_shard(backend: Any, cluster_name: str, shard_name: str) -> Any:
        cluster = failover_shard(backend, cluster_name, shard_name)
        restarts.start(
            cluster_name, "failover", f"FailoverShard {shard_name}", _cache_status(hooks, cluster_name)
        )
        return cluster

    hooks.patch(ElastiCacheBackend, "test_failover", patched_test_failover)
    hooks.patch(ElastiCacheBackend, "reboot_cache_cluster", patched_reboot)
    hooks.patch(MemoryDBBackend, "failover_shard", patched_failover_shard)
