"""A cache spec's ``settings`` as a parameter group: ElastiCache and MemoryDB apply server settings only
through one, so a setting that is not in a group the cluster was created with is never applied.

The group is created before the cluster, named ``<resource name>-params`` and tagged like everything a
run creates (its run id, owner, expiry: the janitor finds it). Each setting goes in a call of its own,
so a value the service refuses fails the run before the cluster exists, naming the setting. The group
is deleted after the cluster; while the cluster is still deleting the service refuses
(InvalidCacheParameterGroupState / InvalidParameterGroupStateFault) and the janitor finishes the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.common import already_exists, aws_call, is_not_found, tag_list
from benchwright.spec import Scalar


def _major_minor(version: str) -> tuple[int, int]:
    parts = [p for p in (version or "").split(".") if p.isdigit()]
    major = int(parts[0]) if parts else 7
    return major, int(parts[1]) if len(parts) > 1 else 0


def elasticache_family(cache_engine: str, version: str) -> str:
    """The CacheParameterGroupFamily of an engine version: redis 7.1 -> redis7, 6.2 -> redis6.x,
    5.0.6 -> redis5.0; valkey 8.0 -> valkey8, 7.2 -> valkey7."""
    major, minor = _major_minor(version)
    if cache_engine == "valkey":
        return f"valkey{major}"
    if major >= 7:
        return f"redis{major}"
    if major == 6:
        return "redis6.x"
    return f"redis{major}.{minor}"


def memorydb_family(cache_engine: str, version: str) -> str:
    """MemoryDB's parameter group family: redis 7.1 -> memorydb_redis7, valkey 7.2 -> memorydb_valkey7."""
    major, _minor = _major_minor(version)
    return f"memorydb_{cache_engine}{major}"


def setting_value(value: Scalar) -> str:
    """A spec value as the service's parameter string (booleans as Redis spells them)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass(frozen=True)
class GroupApi:
    """One service's parameter group calls and their argument names."""

    service: str  # boto3 client name
    label: str  # in error messages
    create: str
    modify: str
    delete: str
    name_key: str  # the group name argument
    family_key: str
    in_use_codes: tuple[str, ...]  # the error code while a cluster still uses the group


ELASTICACHE = GroupApi(
    "elasticache",
    "ElastiCache",
    "create_cache_parameter_group",
    "modify_cache_parameter_group",
    "delete_cache_parameter_group",
    "CacheParameterGroupName",
    "CacheParameterGroupFamily",
    ("InvalidCacheParameterGroupState",),
)
MEMORYDB = GroupApi(
    "memorydb",
    "MemoryDB",
    "create_parameter_group",
    "update_parameter_group",
    "delete_parameter_group",
    "ParameterGroupName",
    "Family",
    ("InvalidParameterGroupStateFault",),
)


def create_group(
    api: GroupApi, client: Any, name: str, family: str, settings: Mapping[str, Scalar], run_id: str, tags: Any
) -> None:
    """Create the group (a re-run finds its own) and set each setting in a call of its own: a refused
    setting raises ProvisioningFailed naming ``target.settings.<name>`` and the service's reason."""
    create: dict[str, Any] = {
        api.name_key: name,
        api.family_key: family,
        "Description": f"benchwright {run_id}",
        "Tags": tag_list(tags),
    }
    try:
        aws_call(f"{api.label} parameter group {name}", getattr(client, api.create), **create)
    except ProvisioningFailed as exc:
        if not already_exists(exc):
            raise
    for key, value in sorted(settings.items()):
        text = setting_value(value)
        modify: dict[str, Any] = {
            api.name_key: name,
            "ParameterNameValues": [{"ParameterName": key, "ParameterValue": text}],
        }
        aws_call(
            f"target.settings.{key}: {api.label} refused {key}={text!r} (parameter group {name}, {family})",
            getattr(client, api.modify),
            **modify,
        )


def settings_group(api: GroupApi, client: Any, target: Any, family: str) -> str | None:
    """An ElastiCache or MemoryDB target's ``settings`` as a parameter group, made (and each setting
    accepted) before the cluster, so a refused setting fails the run with nothing else created; None
    without settings (the service's default group)."""
    if not target.spec.settings:
        return None
    name = str(target.name) + "-params"
    target.handle["parameter_group"] = name  # known at once: a failed create deletes it
    create_group(api, client, name, family, target.spec.settings, target.run_id, target.tags())
    return name


def delete_group_later_ok(api: GroupApi, client: Any, name: str) -> bool:
    """Delete the group; False while its cluster is still deleting (the janitor deletes it later, by
    its tags). Already gone counts as deleted."""
    from botocore.exceptions import ClientError

    try:
        getattr(client, api.delete)(**{api.name_key: name})
        return True
    except ClientError as exc:
        if is_not_found(exc):
            return True
        if exc.response.get("Error", {}).get("Code") in api.in_use_codes:
            return False
        raise
