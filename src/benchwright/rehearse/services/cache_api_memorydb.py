"""MemoryDB's parameter groups and FailoverShard for moto (see cache_api.py, which installs these)."""

from __future__ import annotations

from typing import Any

from benchwright.rehearse.services.cache_api import Group, body, check_parameters, groups, service_error


def _create(backend: Any, name: str, family: str, description: str, tags: list[dict[str, str]]) -> Group:
    known = groups(backend)
    if name in known:
        raise service_error(
            "ParameterGroupAlreadyExistsFault", f"Parameter group {name} already exists.", service="memorydb"
        )
    arn = f"arn:aws:memorydb:{backend.region_name}:{backend.account_id}:parametergroup/{name}"
    group = known[name] = Group(name, family, description, arn)
    if tags:
        backend.tagger.tag_resource(arn, tags)
    return group


def _group(backend: Any, name: str) -> Group:
    group = groups(backend).get(name)
    if group is None:
        raise service_error(
            "ParameterGroupNotFoundFault", f"Parameter group {name} not found.", service="memorydb"
        )
    return group


def _update(backend: Any, name: str, pairs: list[dict[str, str]]) -> Group:
    group = _group(backend, name)
    group.parameters.update(check_parameters("memorydb", group, pairs))
    return group


def _delete(backend: Any, name: str) -> Group:
    group = _group(backend, name)
    users = [
        cluster_name
        for cluster_name, cluster in backend.clusters.items()
        if getattr(cluster, "parameter_group_name", None) == name
        and str(cluster.status).lower() != "deleting"
    ]
    if users:
        raise service_error(
            "InvalidParameterGroupStateFault",
            f"Parameter group {name} is in use by cluster(s) {', '.join(users)}.",
            service="memorydb",
        )
    del groups(backend)[name]
    return group


def _failover_shard(backend: Any, cluster_name: str, shard_name: str) -> Any:
    cluster = backend.clusters.get(cluster_name)
    if cluster is None:
        raise service_error("ClusterNotFoundFault", f"Cluster {cluster_name} not found.", service="memorydb")
    if str(cluster.status).lower() != "available":
        raise service_error(
            "InvalidClusterStateFault", f"Cluster {cluster_name} is {cluster.status}.", service="memorydb"
        )
    shards = [f"{i + 1:04d}" for i in range(int(getattr(cluster, "num_shards", 1) or 1))]
    if shard_name not in shards:
        raise service_error("ShardNotFoundFault", f"Shard {shard_name} not found.", service="memorydb")
    return cluster


def _shape(group: Group) -> dict[str, Any]:
    return {"Name": group.name, "Family": group.family, "Description": group.description, "ARN": group.arn}


def _responses() -> dict[str, Any]:
    from moto.core.responses import ActionResult

    def create_parameter_group(self: Any) -> Any:
        p = body(self)
        group = self.memorydb_backend.create_parameter_group(
            str(p.get("ParameterGroupName")),
            str(p.get("Family")),
            str(p.get("Description", "")),
            p.get("Tags") or [],
        )
        return ActionResult({"ParameterGroup": _shape(group)})

    def update_parameter_group(self: Any) -> Any:
        p = body(self)
        group = self.memorydb_backend.update_parameter_group(
            str(p.get("ParameterGroupName")), p.get("ParameterNameValues") or []
        )
        return ActionResult({"ParameterGroup": _shape(group)})

    def delete_parameter_group(self: Any) -> Any:
        group = self.memorydb_backend.delete_parameter_group(str(body(self).get("ParameterGroupName")))
        return ActionResult({"ParameterGroup": _shape(group)})

    def describe_parameter_groups(self: Any) -> Any:
        name = body(self).get("ParameterGroupName")
        backend = self.memorydb_backend
        found = [_group(backend, name)] if name else list(groups(backend).values())
        return ActionResult({"ParameterGroups": [_shape(g) for g in found]})

    def describe_parameters(self: Any) -> Any:
        group = _group(self.memorydb_backend, str(body(self).get("ParameterGroupName")))
        return ActionResult(
            {"Parameters": [{"Name": k, "Value": v} for k, v in sorted(group.parameters.items())]}
        )

    def failover_shard(self: Any) -> Any:
        p = body(self)
        cluster = self.memorydb_backend.failover_shard(str(p.get("ClusterName")), str(p.get("ShardName")))
        return ActionResult({"Cluster": cluster.to_dict()})

    return {
        f.__name__: f
        for f in (
            create_parameter_group,
            update_parameter_group,
            delete_parameter_group,
            describe_parameter_groups,
            describe_parameters,
            failover_shard,
        )
    }


def install() -> None:
    from moto.memorydb.models import MemoryDBBackend
    from moto.memorydb.responses import MemoryDBResponse

    calls = {
        "create_parameter_group": _create,
        "update_parameter_group": _update,
        "delete_parameter_group": _delete,
        "failover_shard": _failover_shard,
    }
    for name, fn in calls.items():
        setattr(MemoryDBBackend, name, fn)
    for name, fn in _responses().items():
        setattr(MemoryDBResponse, name, fn)
    list_arns = MemoryDBBackend.__dict__["_list_arns"]
    create = MemoryDBBackend.__dict__["create_cluster"]

    def _list_arns(backend: Any) -> list[str]:  # ListTags / TagResource find parameter groups too
        arns: list[str] = list_arns(backend)
        return arns + [g.arn for g in groups(backend).values()]

    def create_cluster(backend: Any, cluster_name: str, *args: Any, **kwargs: Any) -> Any:
        name = kwargs.get("parameter_group_name")
        if name and not str(name).startswith("default."):
            _group(backend, str(name))
        return create(backend, cluster_name, *args, **kwargs)

    setattr(MemoryDBBackend, "_list_arns", _list_arns)  # noqa: B010
    setattr(MemoryDBBackend, "create_cluster", create_cluster)  # noqa: B010
