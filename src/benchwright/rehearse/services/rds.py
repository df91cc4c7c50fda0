"""RDS and Aurora inside the moto server: CreateDBInstance / CreateDBCluster start a stand-in server
of the same engine on 127.0.0.1 (with the parameter group's settings) and its AWS/RDS series; the
RDS-managed secret holds its password in AWS's shape; DeleteDBInstance / DeleteDBCluster delete it.
An instance of a cluster (its writer, a reader that scale_out adds) is served by the cluster's
stand-in: its own endpoint, the cluster's and the reader endpoint are all 127.0.0.1 at that port.
The instance or cluster is ``creating`` until the stand-in accepts connections. Instances and clusters
go through the same two hooks, told apart by a table of moto's names (``KINDS``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchwright.rehearse.metrics import CreditModel

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


@dataclass(frozen=True)
class Kind:
    """moto's names for one RDS resource kind."""

    create: str  # RDSBackend method
    delete: str
    ident: str  # the identifier's key in the create kwargs
    existing: str  # RDSBackend attribute holding the created ones
    group_key: str  # the parameter group's key in the create kwargs
    groups: str  # RDSBackend attribute holding parameter groups
    dimension: str  # the AWS/RDS dimension of its series


KINDS = {
    "instance": Kind(
        "create_db_instance",
        "delete_db_instance",
        "db_instance_identifier",
        "databases",
        "db_parameter_group_name",
        "db_parameter_groups",
        "DBInstanceIdentifier",
    ),
    "cluster": Kind(
        "create_db_cluster",
        "delete_db_cluster",
        "db_cluster_identifier",
        "clusters",
        "db_cluster_parameter_group_name",
        "db_cluster_parameter_groups",
        "DBClusterIdentifier",
    ),
}


def install(hooks: Hooks) -> None:
    from moto.rds.models import DBCluster, DBInstance, MasterUserSecret, RDSBackend

    for name, kind in KINDS.items():
        hooks.patch(
            RDSBackend, kind.create, _create_hook(hooks, name, kind, RDSBackend.__dict__[kind.create])
        )
        hooks.patch(RDSBackend, kind.delete, _delete_hook(hooks, RDSBackend.__dict__[kind.delete]))
    for model, attr, ident in ((DBInstance, "address", "db_instance_identifier"),
                               (DBCluster, "endpoint", "db_cluster_identifier"),
                               (DBCluster, "reader_endpoint", "db_cluster_identifier")):  # fmt: skip
        hooks.patch(model, attr, property(_endpoint_hook(hooks, model.__dict__[attr], ident)))
    cluster_status = DBCluster.__dict__["status"]

    def patched_cluster_status(cluster: Any) -> str:
        known = hooks.status.get(cluster.db_cluster_identifier)
        if known is not None and cluster._status in {"creating", "available"}:
            return known
        result: str = cluster_status.fget(cluster)
        return result

    def set_cluster_status(cluster: Any, value: str) -> None:
        cluster._status = value

    hooks.patch(DBCluster, "status", property(patched_cluster_status, set_cluster_status))
    allocated = DBCluster.__dict__["default_allocated_storage"].__func__

    def default_allocated_storage(engine: str, storage_type: str) -> int:
        if str(storage_type).startswith("aurora"):  # "aurora", "aurora-iopt1": moto knows neither
            return 1
        result: int = allocated(engine, storage_type)
        return result

    hooks.patch(DBCluster, "default_allocated_storage", staticmethod(default_allocated_storage))
    hooks.patch(MasterUserSecret, "_generate_secret_string", _secret_hook(hooks, MasterUserSecret, DBCluster))


def _create_hook(hooks: Hooks, name: str, kind: Kind, create: Any) -> Any:
    def patched(backend: Any, kwargs: dict[str, Any]) -> Any:
        ident = kwargs[kind.ident]
        # an instance of a cluster is served by the cluster's stand-in
        fresh = ident not in getattr(backend, kind.existing) and (
            name == "cluster" or kwargs.get("db_cluster_identifier") is None
        )
        if fresh:
            group_name = kwargs.get(kind.group_key)
            group = getattr(backend, kind.groups, {}).get(group_name) if group_name else None
            extra = {"storage_type": "aurora"} if name == "cluster" else {}
            start_standin(hooks, ident, {**kwargs, **extra}, kind.dimension, group)
        try:
            created = create(backend, kwargs)
        except Exception:  # the API call failed: AWS created nothing, so neither does the rehearsal
            if fresh:
                hooks.stop_standin(ident)
            raise
        server = hooks.standins.get(ident) if fresh else None
        if not fresh and name == "instance":  # a writer or a reader (scale_out): the cluster's stand-in
            serving = hooks.standins.get(str(kwargs.get("db_cluster_identifier")))
            if serving is not None:
                created.port = int(serving.handle["port"])
        if name == "instance":  # its own DbiResourceId, and its monitoring (rehearse/server_series.py)
            monitor(hooks, ident, kwargs, created)
        if server is not None:
            created.port = int(server.handle["port"])
            hooks.status[ident] = "creating"
            if name == "instance":
                created.status = "creating"
                hooks.instances[ident] = created
            hooks.watch_ready(ident, server)
        return created

    return patched


def _delete_hook(hooks: Hooks, delete: Any) -> Any:
    import inspect

    signature = inspect.signature(delete)  # moto passes the identifier by keyword (its own name per kind)
    first = list(signature.parameters)[1]

    def patched(backend: Any, *args: Any, **kwargs: Any) -> Any:
        ident = str(signature.bind(backend, *args, **kwargs).arguments[first])
        deleted = delete(backend, *args, **kwargs)
        hooks.stop_standin(ident)
        return deleted

    return patched


def _endpoint_hook(hooks: Hooks, original: Any, ident_attr: str) -> Any:
    """127.0.0.1 for a resource with a stand-in, and for an instance of a cluster that has one (its
    writer, or a reader scale_out added: a reader is served by the cluster's stand-in, on its port)."""

    def patched(resource: Any) -> str:
        served_by = (getattr(resource, ident_attr), getattr(resource, "db_cluster_identifier", None))
        if any(ident in hooks.standins for ident in served_by if ident):
            return "127.0.0.1"
        result: str = original.fget(resource)
        return result

    return patched


def _secret_hook(hooks: Hooks, secret_model: Any, cluster_model: Any) -> Any:
    secret_string = secret_model.__dict__["_generate_secret_string"]

    def patched(secret: Any) -> str:
        resource = secret.resource
        ident = (
            getattr(resource, "db_cluster_identifier", None) if isinstance(resource, cluster_model) else None
        )
        server = hooks.standins.get(str(ident or getattr(resource, "db_instance_identifier", "")))
        if server is None:
            result: str = secret_string(secret)
            return result
        # RDS-managed secrets hold exactly {"username", "password"}
        return json.dumps({"username": resource.master_username, "password": server.credentials().password})

    return patched


def start_standin(hooks: Hooks, ident: str, db_kwargs: dict[str, Any], dimension: str, group: Any) -> None:
    """A server of the engine on 127.0.0.1 with the parameter group's settings, and its metrics."""
    from benchwright.providers.local.servers import MariaDbServer, PostgresServer
    from benchwright.rehearse.standins import local_target

    engine = str(db_kwargs.get("engine", "postgres"))
    cls = PostgresServer if "postgres" in engine else MariaDbServer
    settings: dict[str, Any] = {}
    if group is not None:
        settings = {k: v["ParameterValue"] for k, v in group.parameters.items() if "ParameterValue" in v}
    if cls is MariaDbServer and db_kwargs.get("enable_performance_insights"):
        settings.setdefault("performance_schema", "ON")  # what RDS turns on for PI on MySQL/MariaDB
    server = cls(local_target("postgres" if cls is PostgresServer else "mysql", settings), run_id=ident)
    server.create()
    hooks.standins[ident] = server
    restore = hooks.restores.pop(ident, None)  # a restore's data (services/rds_restore.py)
    if restore is not None:
        restore(server)
    from benchwright.rehearse.credits_carry import standin_key

    storage_type = str(db_kwargs.get("storage_type") or "gp2")
    size_gb = float(db_kwargs.get("allocated_storage") or 20)
    model = CreditModel(
        instance_class=str(db_kwargs.get("db_instance_class") or ""),
        storage_type=storage_type,
        size_gb=size_gb,
        start_fraction=hooks.faults.credits_start,
        burst_fraction=hooks.faults.burst_start.get(standin_key(storage_type, size_gb)),
    )
    hooks.publish(ident, "AWS/RDS", {dimension: ident}, server, model)
    hooks.events.append(f"stand-in {cls.engine} for {ident} on 127.0.0.1:{server.handle['port']}")


def monitor(hooks: Hooks, ident: str, kwargs: dict[str, Any], created: Any) -> None:
    """Give the instance its own DbiResourceId and, when it asks for Enhanced Monitoring or
    Performance Insights, sample its stand-in (the cluster's, for an Aurora instance)."""
    from benchwright.rehearse.metrics import VCPUS
    from benchwright.rehearse.server_series import ServerSampler, resource_id

    created.dbi_resource_id = resource_id(ident)
    interval = int(kwargs.get("monitoring_interval") or 0)
    insights = bool(kwargs.get("enable_performance_insights"))
    server = hooks.standins.get(ident) or hooks.standins.get(str(kwargs.get("db_cluster_identifier")))
    if server is None or not (interval or insights):
        return
    size = str(kwargs.get("db_instance_class") or "").rsplit(".", 1)[-1]
    sampler = ServerSampler(
        logs=hooks.account.client("logs"),
        instance=ident,
        resource=created.dbi_resource_id,
        engine=server.engine,
        server=server,
        vcpus=VCPUS.get(size, 2),
        interval_s=interval,
        insights=insights,
    )
    sampler.start()
    hooks.samplers[ident] = sampler
    hooks.events.append(
        f"{ident}: Enhanced Monitoring every {interval} s and Performance Insights {'on' if insights else 'off'} "
        "from its stand-in"
    )
