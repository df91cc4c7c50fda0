"""Where a runner goes: the subnet of the chosen AZ, and that AZ's *id* (names differ per account)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchwright.errors import ProvisioningFailed, SpecError
from benchwright.providers.aws.common import aws_call


@dataclass(frozen=True)
class Placement:
    subnet_id: str
    availability_zone: str
    availability_zone_id: str


def subnets_by_az(ec2: Any, subnet_ids: list[str]) -> dict[str, dict[str, Any]]:
    """AZ name -> the first configured subnet in it (describe_subnets gives both name and id)."""
    if not subnet_ids:
        raise ProvisioningFailed("runner placement: no subnets configured (BENCHWRIGHT_SUBNET_IDS)")
    subnets = aws_call("ec2 describe_subnets", ec2.describe_subnets, SubnetIds=subnet_ids)["Subnets"]
    found: dict[str, dict[str, Any]] = {}
    for subnet in sorted(subnets, key=lambda s: (s["AvailabilityZone"], s["SubnetId"])):
        found.setdefault(subnet["AvailabilityZone"], subnet)
    return found


def choose(
    ec2: Any, subnet_ids: list[str], placement: str, target_az: str | None, index: int = 0
) -> Placement:
    """``same-az`` (the target primary's AZ), ``other-az`` (any other), an AZ name or an AZ id: the
    placements ``RunnerSpec`` accepts, and no other."""
    by_az = subnets_by_az(ec2, subnet_ids)
    if placement == "same-az":
        if not target_az:
            raise ProvisioningFailed("runner placement same-az: the target's AZ is not known")
        if target_az not in by_az:
            raise ProvisioningFailed(f"runner placement same-az: no configured subnet in {target_az}")
        subnet = by_az[target_az]
    elif placement == "other-az":
        others = [az for az in sorted(by_az) if az != target_az]
        if not others:
            raise ProvisioningFailed(f"runner placement other-az: every subnet is in {target_az}")
        subnet = by_az[others[index % len(others)]]
    else:
        match = [
            s for s in by_az.values() if placement in (s["AvailabilityZone"], s.get("AvailabilityZoneId"))
        ]
        if not match:
            raise SpecError(
                "runner.placement", f"no configured subnet in AZ {placement!r} (have {sorted(by_az)})"
            )
        subnet = match[0]
    return Placement(subnet["SubnetId"], subnet["AvailabilityZone"], subnet.get("AvailabilityZoneId", ""))
