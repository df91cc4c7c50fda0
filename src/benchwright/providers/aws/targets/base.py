"""The AWS side of the Target template method: tags, clients, the readiness probe, error names.

Subclasses implement ``_create`` (start creating, return ids), ``_service_status`` (what the AWS API
says, plus the endpoint once known) and ``_delete`` (idempotent). ``_status`` here combines the two
halves of readiness: the service says available AND the probe gets a connection.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from benchwright.providers.aws.common import Clients, lifecycle_tags, resource_name
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.probe import Probe, tcp_probe
from benchwright.providers.base import SpecT, Target, TargetStatus

ServiceStatus = tuple[TargetStatus, str | None, int | None]  # (status, host, port)


def storage_text(kind: str, size_gb: int | None, iops: int | None, throughput_mbps: int | None = None) -> str:
    """A volume in words, as the fingerprint shows it: "gp2 100 GiB", "gp3 400 GiB 12000 IOPS"."""
    parts = [kind]
    if size_gb:
        parts.append(f"{size_gb} GiB")
    if iops:
        parts.append(f"{iops} IOPS")
    if throughput_mbps:
        parts.append(f"{throughput_mbps} MiB/s")
    return " ".join(parts)


def redis_connection(host: str, port: int, tls: bool) -> dict[str, str]:
    """A Redis-protocol target's driver properties (ElastiCache, MemoryDB, EC2's servers, an endpoint)."""
    return {"redis.host": host, "redis.port": str(port), "redis.tls": "true" if tls else "false"}


class AwsTarget(Target[SpecT]):
    """Base of every AWS target; ``spec`` is the spec's target section as its validated model."""

    kind = "aws"
    default_port = 0

    def __init__(
        self,
        spec: SpecT,
        run_id: str,
        handle: Mapping[str, str] | None = None,
        *,
        clients: Clients,
        config: AwsSettings,
        probe: Probe | None = None,
    ) -> None:
        super().__init__(spec, run_id, handle)
        self.clients = clients
        self.config = config
        self.probe = probe or tcp_probe(config.probe_timeout_s)

    def create(self) -> dict[str, str]:
        """Create; when that fails half-way, delete what was made before re-raising (nothing leaks)."""
        try:
            return super().create()
        except Exception:
            with contextlib.suppress(Exception):
                self._delete()
            raise

    # naming and tags ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.handle.get("name") or resource_name(self.run_id)

    def tags(self) -> dict[str, str]:
        return lifecycle_tags(self.config, self.run_id)

    # readiness ----------------------------------------------------------------------------
    def _status(self) -> TargetStatus:
        status, host, port = self._service_status()
        if status != "ready":
            return status
        if host:
            self.handle["host"] = host
            self.handle["port"] = str(port or self.default_port)
        if not host or not self.probe(host, int(port or self.default_port)):
            return "creating"  # the API says available; the database does not answer yet
        return "ready"

    def _service_status(self) -> ServiceStatus:
        raise NotImplementedError

    def endpoint(self) -> tuple[str, int]:
        """host, port of the primary; asks the service when the handle does not know yet."""
        if "host" not in self.handle:
            _status, host, port = self._service_status()
            if host:
                self.handle["host"], self.handle["port"] = host, str(port or self.default_port)
        return self.handle.get("host", ""), int(self.handle.get("port") or self.default_port)

    def describe(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"kind": self.kind, "name": self.name}
        for key in ("engine", "engine_version", "instance_class", "node_type", "availability_zone"):
            value = getattr(self.spec, key, None)  # the fields this provider's model has
            if value is not None:
                facts[key] = value
        if "availability_zone" in self.handle:
            facts["availability_zone"] = self.handle["availability_zone"]
        return facts

    def fingerprint_facts(self) -> dict[str, str | None]:
        """The primary's AZ (noted by the status polls) with its AZ id, the class and the storage as
        the spec asked for them (``_storage_facts`` overrides with what the service describes)."""
        az = self.handle.get("availability_zone") or None
        spec_class = next(
            (
                getattr(self.spec, f)
                for f in ("instance_class", "node_type", "instance_type")
                if getattr(self.spec, f, None)
            ),
            None,
        )
        return {
            "target_az": az,
            "target_az_id": self._az_id(az),
            "target_class": spec_class,
            "storage": self._storage_facts(),
        }

    def _az_id(self, az: str | None) -> str | None:
        """The AZ id of an AZ name (ids are the same zone in every account; names are not)."""
        if not az:
            return None
        try:
            zones = self.clients("ec2").describe_availability_zones(ZoneNames=[az])["AvailabilityZones"]
        except Exception:  # the fingerprint then shows the name alone
            return None
        return str(zones[0].get("ZoneId") or "") or None if zones else None

    def _storage_facts(self) -> str | None:
        """The spec's storage in words ("gp3 400 GiB 12000 IOPS"); None where the spec has none."""
        storage = getattr(self.spec, "storage", None) or getattr(self.spec, "volume", None)
        if storage is not None:
            return storage_text(storage.type, storage.size_gb, storage.iops, storage.throughput_mbps)
        kind = getattr(self.spec, "storage_type", None)  # Aurora: aurora | aurora-iopt1
        return str(kind) if kind else None

    def trigger(self, action: str, params: Mapping[str, Any] | None = None) -> str:
        """Start an event's action with the service's API (its kind's call: targets/events.py)."""
        from benchwright.providers.aws.targets.events import trigger

        return trigger(self, action, params)

    # metrics (CloudWatch namespace and dimensions of this target) -------------------------
    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        """(namespace, dimensions) pairs the CloudWatch source queries for this target."""
        return []
