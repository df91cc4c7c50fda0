"""Both runner classes priced for one spec, for `validate` (issue 27).

A cloud spec runs its load generator as one class: ``measured`` (a dedicated EC2 instance of a
pinned type) or ``smoke`` (Fargate). Seeing what the other class would cost is what lets a user
choose knowingly: the spec is re-priced with its runner on the other class, everything else the
same. The other class gets the nearest size in vCPUs: a Fargate runner of N vCPU is priced as the
c6i type of N vCPU (at least c6i.large, ``DEFAULT_RUNNER_INSTANCE_TYPE``), an EC2 runner as the
Fargate size of its vCPUs (at most 16) with the least memory Fargate allows for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from benchwright.errors import SpecError
from benchwright.experiments.budget import SpecBudget, estimate_spec, spec_budget

if TYPE_CHECKING:
    from benchwright.providers.aws.pricelist import PriceList
    from benchwright.spec import BenchmarkSpec, SuiteSpec
    from benchwright.spec.runners import RunnerSpec

RUNNER_ITEMS = ("fargate runner", "ec2 runner")  # the price book's runner line items (pricing.py)
# Fargate vCPU -> the c6i type of as many vCPUs (2 GiB a vCPU, as Fargate's least memory)
C6I_BY_VCPU = {2.0: "c6i.large", 4.0: "c6i.xlarge", 8.0: "c6i.2xlarge", 16.0: "c6i.4xlarge"}
SIZE_RE = re.compile(r"\.(\d*)(x?large|medium)$")


@dataclass
class ClassCost:
    runner_class: str  # measured | smoke
    runs_on: str  # "ec2 c6i.large" | "fargate 2 vCPU / 4 GB"
    chosen: bool  # the class the spec runs as
    runner_usd: float = 0.0  # the runner's line items, all cells and repeats
    total_usd: float = 0.0  # the whole spec on this class
    missing: list[str] = field(default_factory=list)
    why_not: str | None = None  # why this class could not be priced for this spec


def runs_on(runner: RunnerSpec) -> str:
    if runner.platform == "ec2":
        return f"ec2 {runner.ec2_instance_type}"
    size = runner.size.fargate
    return f"fargate {size.cpu:g} vCPU / {size.memory_mb / 1024:g} GB"


def other_class(spec: BenchmarkSpec) -> BenchmarkSpec:
    """``spec`` with its runner on the other class, placement, count and processes kept; a
    SpecError when the spec cannot run that way (a matrix that varies the runner's size)."""
    from benchwright.spec.model import BenchmarkSpec, spec_dict

    data = spec_dict(spec)
    runner = {
        k: v
        for k, v in data.get("runner", {}).items()
        if k not in ("platform", "class", "runner_class", "size", "instance_type")
    }
    if spec.runner.cls == "measured":
        cpu = _fargate_cpu(_vcpus(spec.runner.ec2_instance_type))
        runner |= {"class": "smoke", "size": {"cpu": cpu}}
    else:
        cpu = max(spec.runner.size.fargate.cpu, 2.0)
        runner |= {"class": "measured", "instance_type": C6I_BY_VCPU[cpu]}
    try:
        return BenchmarkSpec.model_validate({**data, "runner": runner})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "runner"
        raise SpecError(where, str(first["msg"])) from None


def runner_usd(budget: SpecBudget) -> float:
    return round(sum(usd for name, usd, _ in budget.line_items() if name.startswith(RUNNER_ITEMS)), 4)


def class_costs(spec: BenchmarkSpec, budget: SpecBudget, prices: PriceList | None) -> list[ClassCost]:
    """The spec's own class (from ``budget``) and the other one, measured first; [] for a local run."""
    if spec.runner.platform == "local":
        return []
    chosen = ClassCost(
        spec.runner.cls, runs_on(spec.runner), True, runner_usd(budget), budget.total_usd, budget.missing
    )
    other_name = "smoke" if spec.runner.cls == "measured" else "measured"
    try:
        alt = other_class(spec)
    except SpecError as exc:
        return sorted([chosen, _not_priced(other_name, exc)], key=lambda c: c.runner_class)
    try:
        alt_budget = estimate_spec(alt, prices)
    except SpecError as exc:  # the matrix sets what the other class cannot take (runner.size.cpu)
        other = _not_priced(other_name, exc)
    else:
        other = ClassCost(
            other_name,
            runs_on(alt.runner),
            False,
            runner_usd(alt_budget),
            alt_budget.total_usd,
            alt_budget.missing,
        )
    return sorted([chosen, other], key=lambda c: c.runner_class)


def _not_priced(runner_class: str, exc: SpecError) -> ClassCost:
    return ClassCost(
        runner_class, "", False, why_not=f"{exc.field}: {exc.detail}" if exc.field else exc.detail
    )


def _vcpus(instance_type: str) -> int | None:
    """vCPUs by size name as the x86 and Graviton families count them (medium 1, large 2, xlarge 4,
    Nxlarge 4N); None for metal and other sizes."""
    match = SIZE_RE.search(instance_type)
    if match is None:
        return None
    count, size = match.groups()
    if size == "medium":
        return 1
    if size == "large":
        return 2
    return 4 * int(count or 1)


def _fargate_cpu(vcpus: int | None) -> float:
    """The largest Fargate CPU size not above ``vcpus`` (the default when unknown)."""
    from benchwright.spec.runners import FARGATE_CPU, FARGATE_DEFAULT_VCPU

    if vcpus is None:
        return FARGATE_DEFAULT_VCPU
    return float(max(c for c in FARGATE_CPU if c <= max(vcpus, min(FARGATE_CPU))))


def suite_budgets_both_classes(suite: SuiteSpec, prices_dir: str | None = None) -> list[SpecBudget]:
    """Each benchmark's budget with its runner priced on both classes, as ``validate`` shows them."""
    budgets = []
    for spec in suite.benchmarks:
        budget, prices = spec_budget(spec, prices_dir)
        budget.classes = class_costs(spec, budget, prices)
        budgets.append(budget)
    return budgets
