"""ElastiCache and MemoryDB calls moto 5.2.5 has no backend for, answered in AWS's response shapes:

- ElastiCache CreateCacheParameterGroup, ModifyCacheParameterGroup, DeleteCacheParameterGroup,
  DescribeCacheParameterGroups, DescribeCacheParameters; TestFailover; RebootCacheCluster.
- MemoryDB CreateParameterGroup, UpdateParameterGroup, DeleteParameterGroup, DescribeParameterGroups,
  DescribeParameters; FailoverShard.

Each behaves as the service documents it: a group is tagged at creation and found by ListTags; a
parameter the service would refuse (cache_parameters.py) is answered InvalidParameterValue naming it;
a group still used by a replication group or cluster cannot be deleted (InvalidCacheParameterGroupState
/ InvalidParameterGroupStateFault); creating a replication group or cluster with a group that does not
exist is CacheParameterGroupNotFound / ParameterGroupNotFoundFault.

``install()`` adds them to moto once per process (idempotent, never undone): the rehearsal's moto server
and the tests' in-process moto get the same calls. The rehearsal's hooks wrap the backend methods added
here (cache.py applies a group to the stand-in; events.py restarts it on a failover).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from benchwright.rehearse.services.cache_parameters import refusal

_STORE = "benchwright_parameter_groups"  # the groups of one moto backend (account and region)
_installed = threading.Lock()
_done: list[bool] = []


@dataclass
class Group:
    name: str
    family: str
    description: str
    arn: str
    parameters: dict[str, str] = field(default_factory=dict)


def groups(backend: Any) -> dict[str, Group]:
    """The parameter groups of one moto backend, by name."""
    found: dict[str, Group] | None = backend.__dict__.get(_STORE)
    if found is None:
        found = backend.__dict__[_STORE] = {}
    return found


def service_error(code: str, message: str, service: str = "elasticache") -> Exception:
    """An error moto answers in the service's own error shape (its exception module names the service)."""
    if service == "memorydb":
        from moto.memorydb.exceptions import MemoryDBClientError

        return MemoryDBClientError(code, message)
    from moto.elasticache.exceptions import ElastiCacheException

    return ElastiCacheException(code, message)


def install() -> None:
    """Add the calls to moto's ElastiCache (once per process; MemoryDB's: cache_api_memorydb.install)."""
    with _installed:
        if _done:
            return
        _install_elasticache()
        _done.append(True)


# ---------------------------------------------------------------- ElastiCache backend
def _ec_create(backend: Any, name: str, family: str, description: str, tags: list[dict[str, str]]) -> Group:
    known = groups(backend)
    if name in known:
        raise service_error("CacheParameterGroupAlreadyExists", f"Parameter group {name} already exists.")
    arn = f"arn:aws:elasticache:{backend.region_name}:{backend.account_id}:parametergroup:{name}"
    group = known[name] = Group(name, family, description, arn)
    if tags:
        backend.tagging_service.tag_resource(arn, tags)
    return group


def _ec_group(backend: Any, name: str) -> Group:
    group = groups(backend).get(name)
    if group is None:
        raise service_error("CacheParameterGroupNotFound", f"CacheParameterGroup {name} not found.")
    return group


def check_parameters(service: str, group: Group, pairs: list[dict[str, str]]) -> dict[str, str]:
    """The pairs as a mapping; the first the service would refuse raises InvalidParameterValue(Exception)."""
    code = "InvalidParameterValue" if service == "elasticache" else "InvalidParameterValueException"
    values: dict[str, str] = {}
    for pair in pairs:
        name, value = str(pair.get("ParameterName")), str(pair.get("ParameterValue"))
        why = refusal(service, name, value)
        if why is not None:
            raise service_error(code, f"{why} (parameter group {group.name}, family {group.family})", service)
        values[name] = value
    return values


def _ec_modify(backend: Any, name: str, pairs: list[dict[str, str]]) -> Group:
    group = _ec_group(backend, name)
    group.parameters.update(check_parameters("elasticache", group, pairs))
    return group


def _ec_delete(backend: Any, name: str) -> None:
    _ec_group(backend, name)
    users = [
        rg_id
        for rg_id, rg in backend.replication_groups.items()
        if getattr(rg, "cache_parameter_group_name", None) == name and rg.status != "deleting"
    ]
    if users:
        raise service_error(
            "InvalidCacheParameterGroupState",
            f"Parameter group {name} is in use by replication group(s) {', '.join(users)}.",
        )
    del groups(backend)[name]


def _ec_test_failover(backend: Any, replication_group_id: str, node_group_id: str) -> Any:
    group = backend.replication_groups.get(replication_group_id)
    if group is None:
        raise service_error(
            "ReplicationGroupNotFoundFault", f"ReplicationGroup {replication_group_id} not found."
        )
    if group.status != "available":
        raise service_error(
            "InvalidReplicationGroupState", f"Replication group {replication_group_id} is {group.status}."
        )
    ids = [str(ng.get("node_group_id", "0001")) for ng in group.node_groups] or ["0001"]
    if node_group_id not in ids:
        raise service_error("NodeGroupNotFoundFault", f"Node group {node_group_id} not found.")
    return group


def _ec_reboot(backend: Any, cache_cluster_id: str, node_ids: list[str]) -> dict[str, Any]:
    """A member cluster of a replication group is ``<group>-NNN``; moto keeps no cluster objects for them."""
    group_id = cache_cluster_id.rsplit("-", 1)[0]
    if cache_cluster_id not in backend.cache_clusters and group_id not in backend.replication_groups:
        raise service_error("CacheClusterNotFound", f"Cache cluster {cache_cluster_id} not found.")
    return {
        "CacheClusterId": cache_cluster_id,
        "CacheClusterStatus": "rebooting cache cluster nodes",
        "ReplicationGroupId": group_id,
    }


# ---------------------------------------------------------------- ElastiCache responses
def _ec_group_shape(group: Group) -> dict[str, Any]:
    return {
        "CacheParameterGroupName": group.name,
        "CacheParameterGroupFamily": group.family,
        "Description": group.description,
        "IsGlobal": False,
        "ARN": group.arn,
    }


def _ec_responses() -> dict[str, Any]:
    from moto.core.responses import ActionResult, EmptyResult

    def create_cache_parameter_group(self: Any) -> Any:
        p = self._get_params()
        group = self.elasticache_backend.create_cache_parameter_group(
            str(p.get("CacheParameterGroupName")),
            str(p.get("CacheParameterGroupFamily")),
            str(p.get("Description", "")),
            p.get("Tags") or [],
        )
        return ActionResult({"CacheParameterGroup": _ec_group_shape(group)})

    def modify_cache_parameter_group(self: Any) -> Any:
        p = self._get_params()
        group = self.elasticache_backend.modify_cache_parameter_group(
            str(p.get("CacheParameterGroupName")), p.get("ParameterNameValues") or []
        )
        return ActionResult({"CacheParameterGroupName": group.name})

    def delete_cache_parameter_group(self: Any) -> Any:
        self.elasticache_backend.delete_cache_parameter_group(str(self._get_param("CacheParameterGroupName")))
        return EmptyResult()

    def describe_cache_parameter_groups(self: Any) -> Any:
        name = self._get_param("CacheParameterGroupName")
        backend = self.elasticache_backend
        found = [_ec_group(backend, name)] if name else list(groups(backend).values())
        return ActionResult({"CacheParameterGroups": [_ec_group_shape(g) for g in found]})

    def describe_cache_parameters(self: Any) -> Any:
        group = _ec_group(self.elasticache_backend, str(self._get_param("CacheParameterGroupName")))
        params = [
            {"ParameterName": k, "ParameterValue": v, "Source": "user", "IsModifiable": True}
            for k, v in sorted(group.parameters.items())
        ]
        return ActionResult({"Parameters": params})

    def test_failover(self: Any) -> Any:
        group = self.elasticache_backend.test_failover(
            str(self._get_param("ReplicationGroupId")), str(self._get_param("NodeGroupId"))
        )
        return ActionResult({"ReplicationGroup": group})

    def reboot_cache_cluster(self: Any) -> Any:
        cluster = self.elasticache_backend.reboot_cache_cluster(
            str(self._get_param("CacheClusterId")), list(self._get_param("CacheNodeIdsToReboot") or [])
        )
        return ActionResult({"CacheCluster": cluster})

    return {
        f.__name__: f
        for f in (
            create_cache_parameter_group,
            modify_cache_parameter_group,
            delete_cache_parameter_group,
            describe_cache_parameter_groups,
            describe_cache_parameters,
            test_failover,
            reboot_cache_cluster,
        )
    }


def _install_elasticache() -> None:
    from moto.elasticache.models import ElastiCacheBackend
    from moto.elasticache.responses import ElastiCacheResponse

    backend_calls = {
        "create_cache_parameter_group": _ec_create,
        "modify_cache_parameter_group": _ec_modify,
        "delete_cache_parameter_group": _ec_delete,
        "test_failover": _ec_test_failover,
        "reboot_cache_cluster": _ec_reboot,
    }
    for name, fn in backend_calls.items():
        setattr(ElastiCacheBackend, name, fn)
    for name, fn in _ec_responses().items():
        setattr(ElastiCacheResponse, name, fn)
    list_tags = ElastiCacheBackend.__dict__["list_tags_for_resource"]
    create = ElastiCacheBackend.__dict__["create_replication_group"]

    def list_tags_for_resource(backend: Any, arn: str) -> Any:
        if ":parametergroup:" in arn:
            _ec_group(backend, arn.rsplit(":", 1)[-1])
            return backend.tagging_service.list_tags_for_resource(arn)
        return list_tags(backend, arn)

    def create_replication_group(backend: Any, replication_group_id: str, *args: Any, **kwargs: Any) -> Any:
        name = kwargs.get("cache_parameter_group_name")
        if name and not str(name).startswith("default."):
            _ec_group(backend, str(name))
        return create(backend, replication_group_id, *args, **kwargs)

    setattr(ElastiCacheBackend, "list_tags_for_resource", list_tags_for_resource)  # noqa: B010
    setattr(ElastiCacheBackend, "create_replication_group", create_replication_group)  # noqa: B010


def body(response: Any) -> dict[str, Any]:
    """A JSON-protocol request's parameters (MemoryDB)."""
    loaded: dict[str, Any] = json.loads(response.body or "{}")
    return loaded
