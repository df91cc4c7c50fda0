"""What a spec submitted through the API may ask of the account: the stage's limits (issue 30 item 4).

A deployed service runs with the account's permissions, so the API is where a caller's spec meets
the operator's policy, before anything starts:

- ``endpoint`` targets run a cloud runner against an address inside the account's network. They are
  refused unless the stage names CIDRs they may use, and link-local, loopback, metadata and
  unspecified addresses are refused always (169.254.169.254 is the instance metadata service; a
  runner's task role credentials live one hop away). A DNS name must resolve, now, inside those
  CIDRs only.
- Instance classes / node types / instance types (target and runner) must match the stage's
  allow-list (shell-style patterns: ``db.r6g.*``), so no caller starts a ``p5.48xlarge``.
- The estimated duration of each benchmark must fit the stage's ``max_run_hours``.

Each refusal is a ``SpecError`` naming the field and the stage limit it broke.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchwright.errors import SpecError
from benchwright.sharing import estimated_seconds
from benchwright.spec import BenchmarkSpec, TargetSpec

# Families a benchmark team typically measures, any size. An operator narrows or widens this in the
# stage config (api.instance_types); accelerated and bare-metal families are left out on purpose.
DEFAULT_INSTANCE_TYPES: tuple[str, ...] = (
    "db.serverless",
    *(f"db.{f}.*" for f in ("t3", "t4g", "m5", "m6g", "m6i", "m7g", "r5", "r6g", "r6i", "r7g", "x2g")),
    *(f"cache.{f}.*" for f in ("t3", "t4g", "m5", "m6g", "m7g", "r5", "r6g", "r7g")),
    *(
        f"{f}.*"
        for f in (
            "t2", "t3", "t3a", "t4g", "m4", "m5", "m6i", "m6id", "m6g", "m7i", "m7g", "c5", "c6i",
            "c6g", "c7i", "c7g", "r5", "r6i", "r6g", "r7i", "r7g", "i3", "i4i", "im4gn",
        )
    ),
)  # fmt: skip
SUITE_FACTOR = 6  # infra/workflow.py: the suite state machine's timeout is max_run_hours x 6
METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


@dataclass(frozen=True)
class ApiLimits:
    endpoint_cidrs: Sequence[str] = ()
    instance_types: Sequence[str] = DEFAULT_INSTANCE_TYPES
    max_run_hours: float = 8
    resolve: Callable[[str], list[str]] = field(default=lambda host: _resolve(host))


def _resolve(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


def _never(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if address in METADATA:
        return "the instance metadata service"
    if address.is_link_local:
        return "a link-local address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return "not a host address"
    return None


def check_endpoint(target: TargetSpec, limits: ApiLimits, prefix: str = "") -> None:
    """The hosts a target names (an endpoint's: ``named_hosts``; none where Benchwright creates the
    target) against the stage's CIDRs (none: endpoint targets refused)."""
    networks = [ipaddress.ip_network(c, strict=False) for c in limits.endpoint_cidrs]
    for i, entry in enumerate(target.named_hosts()):
        where = f"{prefix}target.hosts[{i}]"
        host = entry.rpartition(":")[0].strip("[]")
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            addresses = []
        if addresses:
            reason = _never(addresses[0])
            if reason:
                raise SpecError(where, f"{host} is {reason}: never a benchmark target from the cloud")
        if not networks:
            raise SpecError(
                where,
                "endpoint targets are refused with cloud runners on this stage (the stage config's "
                "api.endpoint_cidrs lists none)",
            )
        if not addresses:
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in limits.resolve(host)]
            if not addresses:
                raise SpecError(where, f"{host} does not resolve")
        for address in addresses:
            reason = _never(address)
            if reason:
                raise SpecError(where, f"{host} resolves to {reason}: never a benchmark target")
            if not any(address in n for n in networks):
                raise SpecError(
                    where,
                    f"{host} ({address}) is outside the stage's api.endpoint_cidrs "
                    f"({', '.join(limits.endpoint_cidrs)})",
                )


def _sizes(spec: BenchmarkSpec) -> list[tuple[str, str]]:
    """(field, instance class / node type / instance type) of everything the spec would start."""
    out: list[tuple[str, str]] = []
    for name in ("instance_class", "node_type", "instance_type"):
        value = getattr(spec.target, name, None)
        if value:
            out.append((f"target.{name}", str(value)))
    if spec.runner.platform == "ec2" and spec.runner.size.instance_type:
        out.append(("runner.size.instance_type", spec.runner.size.instance_type))
    return out


def check_limits(spec: BenchmarkSpec, limits: ApiLimits, prefix: str = "") -> None:
    """One benchmark of a submission against the stage's limits; a ``SpecError`` for the first breach."""
    if spec.runner.platform != "local":  # a runner in the cloud, to someone else's database's hosts
        check_endpoint(spec.target, limits, prefix)
    for where, value in _sizes(spec):
        if not any(fnmatch.fnmatchcase(value, pattern) for pattern in limits.instance_types):
            raise SpecError(
                f"{prefix}{where}",
                f"{value} is not in the stage's api.instance_types allow-list (ask the operator to add it)",
            )
    # the workflow's own timeouts (infra/workflow.py): one benchmark execution max_run_hours, a suite
    # execution (matrix or repeats) six times that
    suite = bool(spec.matrix) or spec.repeats > 1
    allowed = limits.max_run_hours * (SUITE_FACTOR if suite else 1)
    hours = estimated_seconds(spec) / 3600
    if hours > allowed:
        raise SpecError(
            f"{prefix}workload.phases",
            f"the run is estimated at {hours:.1f} h, over the stage's limit of {allowed:g} h "
            f"(max_run_hours {limits.max_run_hours:g}{' x 6 for a matrix or repeats' if suite else ''})",
        )
