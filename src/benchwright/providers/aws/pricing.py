"""Price book: on-demand USD from the AWS Price List (providers/aws/pricelist.py), read off the typed spec.

Per-run cost = target time (instances / nodes, storage prorated from GB-month, provisioned IOPS and
throughput of RDS and EBS volumes, the Aurora cluster volume at its storage configuration)
+ runner time (Fargate vCPU and GB hours, or the EC2 instance) + usage (what the target's kind
bills by use, such as Aurora Standard I/O requests and MemoryDB data written, in its folder; runner
<-> target bytes across AZs: providers/aws/usage_prices.py; I/O requests billed by storage, such as
RDS magnetic's: the kind's ``io_requests``)
+ the workflow itself (Lambda and Step Functions, from ``workflow_cost``). Also ops per dollar and the
monthly cost of running the same cell every night.

Every line item has a note saying where its unit prices came from and, for usage, what the quantity
rests on (an estimate from the workload, the run's counted operations, or CloudWatch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.pricelist import (
    EBS_IOPS_USAGE,
    GP3_FREE_IOPS,
    GP3_FREE_MIBPS,
    HOURS_PER_MONTH,
    ExcerptPriceList,
    Price,
    PriceList,
    matches,
    on_demand_usd,
)
from benchwright.providers.aws.targets.kinds import kind_of_provider
from benchwright.providers.aws.targets.kinds.ec2.spec import Ec2Volume
from benchwright.providers.base import PriceBook
from benchwright.runs import CellResult, CostEstimate
from benchwright.spec import BenchmarkSpec
from benchwright.spec.runners import RunnerSpec
from benchwright.spec.targets import TargetSpec

__all__ = [
    "HOURS_PER_MONTH",
    "AwsPriceBook",
    "ExcerptPriceList",
    "Lines",
    "PriceList",
    "matches",
    "on_demand_usd",
    "workflow_cost",
]

RDS_MIN_BILLED_S = 600.0  # RDS bills per second with a 10-minute minimum (applied to every target)
RUNNER_MIN_BILLED_S = 60.0  # Fargate and EC2 Linux: per second, one-minute minimum
NIGHTS_PER_MONTH = 30

# Workflow cost model (us-east-1 list prices; Lambda arm64 is cheaper, we assume x86 to be safe).
SFN_PER_TRANSITION = 0.000025
LAMBDA_PER_GB_S = 0.0000166667
LAMBDA_PER_REQUEST = 0.0000002
LAMBDA_MEMORY_GB = 0.25
LAMBDA_AVG_S = 1.5

# Usage types carry a region prefix except in us-east-1 (e.g. EU-Fargate-GB-Hours)
USAGE_PREFIX = {
    "us-east-1": "",
    "us-east-2": "USE2-",
    "us-west-2": "USW2-",
    "eu-west-1": "EU-",
    "eu-central-1": "EUC1-",
    "ap-northeast-1": "APN1-",
}


def workflow_cost(transitions: int, lambda_invocations: int, avg_s: float = LAMBDA_AVG_S) -> float:
    """Lambda + Step Functions (standard) cost of one execution."""
    return transitions * SFN_PER_TRANSITION + lambda_invocations * (
        LAMBDA_PER_REQUEST + avg_s * LAMBDA_MEMORY_GB * LAMBDA_PER_GB_S
    )


@dataclass
class Lines:
    """Line items in USD, each with its note (price sources; for usage, the quantity's basis), and
    the lookups that found no price (the estimate is then incomplete)."""

    items: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    source_set: set[str] = field(default_factory=set)

    def add(self, name: str, usd: float, prices: list[Price], basis: str = "") -> None:
        found = sorted({p.source for p in prices})
        self.source_set.update(found)
        self.items[name] = self.items.get(name, 0.0) + usd
        self.notes[name] = f"{'; '.join(found)}: {basis}" if basis else "; ".join(found)

    @property
    def sources(self) -> list[str]:
        return sorted(self.source_set)

    def total(self) -> float:
        return round(sum(self.items.values()), 6)


class AwsPriceBook(PriceBook):
    """The cost of a spec's cell from its typed target and runner (their defaults are the spec's)."""

    def __init__(self, prices: PriceList, transitions: int = 40, lambda_invocations: int = 14) -> None:
        self.prices = prices
        self.transitions = transitions
        self.lambda_invocations = lambda_invocations

    def rate(self, service: str, **attributes: str) -> Price:
        return self.prices.lookup(service, attributes)

    def usage_prefix(self) -> str:
        """Usage types carry a region prefix except in us-east-1 (e.g. EU-Fargate-GB-Hours)."""
        return USAGE_PREFIX.get(self.prices.region, "")

    def estimate(self, spec: BenchmarkSpec, cell: CellResult | None, duration_s: float) -> CostEstimate:
        lines = self.lines(spec, cell, duration_s)
        total = lines.total()
        measured = cell.measured if cell is not None else None
        ops = measured.operations_total if measured is not None else 0
        incomplete = f" (incomplete: {'; '.join(lines.missing)})" if lines.missing else ""
        return CostEstimate(
            total=total,
            items={k: round(v, 6) for k, v in lines.items.items()},
            notes=dict(lines.notes),
            ops_per_dollar=(ops / total) if total > 0 and ops else None,
            monthly_nightly=round(total * NIGHTS_PER_MONTH, 4),
            source="AWS prices: " + ("; ".join(lines.sources) or "none") + incomplete,
        )

    def lines(
        self,
        spec: BenchmarkSpec,
        cell: CellResult | None,
        duration_s: float,
        runner_s: float | None = None,
    ) -> Lines:
        """Every line item of one cell: the target over ``duration_s``; the runner over ``runner_s``
        (it starts once the target is ready and is gone before teardown), else the span of the
        cell's phases, else ``duration_s``. An unknown price never loses the rest."""
        from benchwright.providers.aws.monitoring_prices import monitoring_lines
        from benchwright.providers.aws.usage_prices import usage_lines

        lines = Lines()
        span = phases_span(cell)
        if runner_s is not None:
            runner = (runner_s, "the cell's estimated time less the target's provisioning and teardown")
        elif span is not None:
            runner = (span, "measured: the span of the cell's phases (start-up not included)")
        else:
            runner = (duration_s, "the cell's whole time")
        parts: list[tuple[str, Callable[[], None]]] = [
            ("target", lambda: self.target_lines(spec.target, duration_s, lines)),
            ("runner", lambda: self.runner_lines(spec.runner, runner[0], lines, runner[1])),
            ("usage", lambda: usage_lines(self, spec, cell, lines)),
            ("magnetic I/O", lambda: self.io_request_lines(spec, cell, duration_s, lines)),
            ("monitoring", lambda: monitoring_lines(self, spec, cell, duration_s, lines)),
        ]
        for part, price_it in parts:
            try:
                price_it()
            except ProvisioningFailed as exc:  # an unknown price never loses the run's results
                lines.missing.append(f"{part}: {exc}")
        lines.add(
            "workflow (Lambda + Step Functions)",
            workflow_cost(self.transitions, self.lambda_invocations),
            [Price(0.0, "benchwright's workflow model (us-east-1 list prices)")],
        )
        return lines

    def io_request_lines(
        self, spec: BenchmarkSpec, cell: CellResult | None, duration_s: float, lines: Lines
    ) -> None:
        """Storage billed per I/O request, priced by the target's kind (``io_requests``: RDS magnetic)."""
        kind = kind_of_provider(spec.target.provider)
        if kind is not None and kind.io_requests is not None:
            kind.io_requests(self, spec, cell, duration_s, lines)

    # target ----------------------------------------------------------------------------------
    def target_items(self, target: TargetSpec, duration_s: float) -> dict[str, float]:
        lines = Lines()
        self.target_lines(target, duration_s, lines)
        return lines.items

    def target_lines(self, target: TargetSpec, duration_s: float, lines: Lines) -> None:
        """The target's line items, priced by its kind (providers/aws/targets/kinds/): a kind without
        a ``price`` (an endpoint) costs nothing we can price."""
        hours = max(duration_s, RDS_MIN_BILLED_S) / 3600
        kind = kind_of_provider(target.provider)
        if kind is not None and kind.price is not None:
            kind.price(self, target, hours, lines)

    def ec2_hourly(self, instance_type: str) -> Price:
        return self.rate(
            "AmazonEC2",
            instanceType=instance_type,
            operatingSystem="Linux",
            tenancy="Shared",
            preInstalledSw="NA",
            capacitystatus="Used",
        )

    def ebs_performance_items(self, volume: Ec2Volume, nodes: int, hours: float) -> dict[str, float]:
        lines = Lines()
        self.ebs_performance_lines(volume, nodes, hours, lines)
        return lines.items

    def ebs_performance_lines(self, volume: Ec2Volume, nodes: int, hours: float, lines: Lines) -> None:
        """Provisioned IOPS (io1, io2; gp3 above its 3,000 included) and gp3 throughput above 125 MiB/s."""
        kind = volume.type
        iops = float(volume.iops or 0) - (GP3_FREE_IOPS if kind == "gp3" else 0)
        if iops > 0 and kind in EBS_IOPS_USAGE:
            unit = self.rate(
                "AmazonEC2",
                productFamily="System Operation",
                volumeApiName=kind,
                usagetype=f"{self.usage_prefix()}EBS:VolumeP-IOPS.{EBS_IOPS_USAGE[kind]}",
            )
            lines.add(
                f"ebs {nodes} x {kind} provisioned IOPS {iops:g}",
                nodes * iops * unit.usd * hours / HOURS_PER_MONTH,
                [unit],
            )
        throughput = float(volume.throughput_mbps or 0) - GP3_FREE_MIBPS
        if kind == "gp3" and throughput > 0:
            unit = self.rate(
                "AmazonEC2",
                productFamily="Provisioned Throughput",
                volumeApiName="gp3",
                usagetype=f"{self.usage_prefix()}EBS:VolumeP-Throughput.gp3",
            )
            lines.add(
                f"ebs {nodes} x gp3 throughput {throughput:g} MiB/s",
                nodes * throughput * unit.usd * hours / HOURS_PER_MONTH,
                [unit],
            )

    # runner ----------------------------------------------------------------------------------
    def runner_items(self, runner: RunnerSpec, duration_s: float) -> dict[str, float]:
        lines = Lines()
        self.runner_lines(runner, duration_s, lines)
        return lines.items

    def runner_lines(self, r: RunnerSpec, duration_s: float, lines: Lines, basis: str = "") -> None:
        hours = max(duration_s, RUNNER_MIN_BILLED_S) / 3600
        basis = f"{basis} ({duration_s:,.0f} s)" if basis else ""
        if r.platform == "fargate":
            cpu, memory_gb = r.size.fargate_vcpu, r.size.fargate_memory_mb / 1024
            prefix = self.usage_prefix()
            vcpu = self.rate(
                "AmazonECS", productFamily="Compute", usagetype=f"{prefix}Fargate-vCPU-Hours:perCPU"
            )
            gb = self.rate("AmazonECS", productFamily="Compute", usagetype=f"{prefix}Fargate-GB-Hours")
            lines.add(
                f"fargate runner {r.count} x {cpu:g} vCPU / {memory_gb:g} GB",
                r.count * hours * (cpu * vcpu.usd + memory_gb * gb.usd),
                [vcpu, gb],
                basis,
            )
        elif r.platform == "ec2" and r.size.instance_type:
            unit = self.ec2_hourly(r.size.instance_type)
            lines.add(
                f"ec2 runner {r.count} x {r.size.instance_type}", r.count * hours * unit.usd, [unit], basis
            )


def phases_span(cell: CellResult | None) -> float | None:
    """Seconds from the cell's first phase start to its last phase end (None: no phases yet)."""
    if cell is None or not cell.phases:
        return None
    docs = cell.phases.values()
    return (max(d.ended_at for d in docs) - min(d.started_at for d in docs)).total_seconds()
