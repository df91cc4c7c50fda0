"""What a deploy will create, read from the synthesized templates (cdk.out), and what it costs idle.

Resources are counted by CloudFormation type. The fixed monthly cost is what the stack costs with no
run at all: the resources billed by the hour or by the month, priced from the same us-east-1 list
prices as docs/deploy.md ("What it costs"; November 2026); everything else (Lambda, Step Functions,
API Gateway, Scheduler, S3, CloudWatch Logs) is billed per use and shown as such. Timestream for
InfluxDB has no figure here: synth states its cost (infra.config.INFLUX_FIXED_COST), repeated as is.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOURS_PER_MONTH = 730.0
# type -> (USD per month for one, what it is); docs/deploy.md's table holds the same figures
MONTHLY_USD: dict[str, tuple[float, str]] = {
    "AWS::EC2::NatGateway": (0.045 * HOURS_PER_MONTH, "NAT gateway (0.045 USD an hour, plus 0.045 USD/GB)"),
    # the NAT gateway's Elastic IP: AWS bills every public IPv4 address (not in docs/deploy.md's table)
    "AWS::EC2::EIP": (0.005 * HOURS_PER_MONTH, "public IPv4 address (0.005 USD an hour)"),
    "AWS::SecretsManager::Secret": (0.40, "secret (0.40 USD a month)"),
    "AWS::KMS::Key": (1.00, "KMS key (1 USD a month)"),
    "AWS::CloudWatch::Alarm": (0.10, "CloudWatch alarm (0.10 USD a month)"),
}
INTERFACE_ENDPOINT_USD = 0.01 * HOURS_PER_MONTH  # per endpoint per AZ (0.01 USD an hour)
INFLUX_TYPE = "AWS::Timestream::InfluxDBInstance"


@dataclass
class Plan:
    """The resources of the synthesized templates, and their fixed monthly cost."""

    counts: Counter[str] = field(default_factory=Counter)
    fixed_usd: float = 0.0
    lines: list[str] = field(default_factory=list)  # one per priced item: "2 x secret ...: 0.80 USD"
    unpriced: list[str] = field(default_factory=list)  # fixed costs stated in words (InfluxDB)

    def describe(self) -> list[str]:
        out = [f"{n:4d} {kind}" for kind, n in sorted(self.counts.items())]
        out.append(f"{sum(self.counts.values())} resources of {len(self.counts)} types")
        return out


def templates(cdk_out: Path) -> list[dict[str, Any]]:
    """The synthesized CloudFormation templates in ``cdk_out``."""
    return [json.loads(path.read_text()) for path in sorted(cdk_out.glob("*.template.json"))]


def _interface_endpoints(resource: Mapping[str, Any]) -> int:
    """An interface endpoint bills per AZ: one per subnet it is placed in."""
    props = resource.get("Properties") or {}
    if props.get("VpcEndpointType") != "Interface":
        return 0
    subnets = props.get("SubnetIds")
    return len(subnets) if isinstance(subnets, list) and subnets else 1


def plan(docs: Iterable[Mapping[str, Any]], influx_cost: str = "") -> Plan:
    """Counts by type and the fixed monthly cost of ``docs`` (see the module docstring);
    ``influx_cost``: the words synth warns with when the stack has a Timestream for InfluxDB instance."""
    out = Plan()
    endpoints = 0
    for doc in docs:
        for resource in (doc.get("Resources") or {}).values():
            out.counts[str(resource.get("Type"))] += 1
            if resource.get("Type") == "AWS::EC2::VPCEndpoint":
                endpoints += _interface_endpoints(resource)
    for kind, (usd, what) in MONTHLY_USD.items():
        if out.counts[kind]:
            out.fixed_usd += usd * out.counts[kind]
            out.lines.append(f"{out.counts[kind]} x {what}: {usd * out.counts[kind]:.2f} USD")
    if endpoints:
        out.fixed_usd += INTERFACE_ENDPOINT_USD * endpoints
        out.lines.append(
            f"{endpoints} x interface endpoint AZ (0.01 USD an hour): {INTERFACE_ENDPOINT_USD * endpoints:.2f} USD"
        )
    if out.counts[INFLUX_TYPE]:
        out.unpriced.append(
            influx_cost or "Timestream for InfluxDB: an always-on instance (see docs/deploy.md)"
        )
    out.counts = Counter({k: v for k, v in out.counts.items() if v})
    return out
