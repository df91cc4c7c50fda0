"""What a rehearsal rehearses: the spec checked for what it cannot rehearse (naming the field), the
region it deploys to, ``--quick``'s smaller version of the same shape, and what a stand-in of another
engine cannot honour (taken out and said in the summary)."""

from __future__ import annotations

from typing import Any

from benchwright.errors import SpecError
from benchwright.rehearse.stack import REGION
from benchwright.spec import BenchmarkSpec, SuiteSpec


def quick_suite(suite: SuiteSpec, seconds: float = 8.0) -> SuiteSpec:
    """``--quick``: the same shape (targets, matrix axes, phases), shorter phases and smaller data."""
    from benchwright.local import scale_down

    return SuiteSpec(
        suite=suite.suite,
        description=suite.description,
        benchmarks=[scale_down(b, seconds=seconds) for b in suite.benchmarks],
    )


def check_cloud(suite: SuiteSpec) -> str:
    """Refuse what a rehearsal cannot rehearse, naming the field; the region to rehearse in (the
    spec's: from its targets' zones, as ``validate`` prices it; one region per rehearsal)."""
    from benchwright.experiments.budget import region_of

    regions: dict[str, str] = {}
    for i, spec in enumerate(suite.benchmarks):
        where = f"benchmarks[{i}]." if len(suite.benchmarks) > 1 else ""
        if spec.is_local:
            raise SpecError(
                f"{where}target.provider",
                f"{spec.target.provider!r} is a local target; `benchwright rehearse` rehearses cloud specs "
                "(run local ones with `benchwright run`)",
            )
        if spec.runner.platform == "local":
            raise SpecError(f"{where}runner.platform", "the cloud runs runners on fargate or ec2")
        regions.setdefault(region_of(spec), f"{where}target.availability_zone")
    if len(regions) > 1:
        raise SpecError(
            sorted(regions.values())[-1],
            f"a rehearsal deploys one stack in one region; this suite spans {sorted(regions)}",
        )
    return next(iter(regions), REGION)


def standin_adjustments(suite: SuiteSpec) -> tuple[SuiteSpec, list[str]]:
    """What a stand-in of another engine cannot honour, taken out and said: YugabyteDB's ``presplit``
    (SPLIT AT VALUES) has no meaning on the PostgreSQL that stands in for YSQL."""
    notes: list[str] = []
    benchmarks = []
    for spec in suite.benchmarks:
        if getattr(spec.target, "presplit", None):
            data = spec_json(spec)
            data["target"].pop("presplit", None)
            spec = BenchmarkSpec.model_validate(data)
            notes.append(
                f"{spec.name}: target.presplit not rehearsed (the PostgreSQL stand-in has no tablets)"
            )
        benchmarks.append(spec)
    return SuiteSpec(suite=suite.suite, description=suite.description, benchmarks=benchmarks), notes


def spec_json(spec: BenchmarkSpec) -> dict[str, Any]:
    data: dict[str, Any] = spec.model_dump(mode="json", exclude_defaults=True)
    return data


def route_slack(suite: SuiteSpec, receiver_secret_arn: str) -> tuple[SuiteSpec, list[str]]:
    """A spec's own ``notify.slack.webhook_secret_arn`` names a secret of the account it was written for;
    in the rehearsal's account the Slack receiver's secret stands in for it (said in the summary)."""
    notes: list[str] = []
    benchmarks = []
    for spec in suite.benchmarks:
        data = spec_json(spec)
        slack = (data.get("notify") or {}).get("slack") or {}
        if slack.get("webhook_secret_arn") and receiver_secret_arn:
            slack["webhook_secret_arn"] = receiver_secret_arn
            spec = BenchmarkSpec.model_validate(data)
            notes.append(f"{spec.name}: notify.slack.webhook_secret_arn -> the rehearsal's Slack receiver")
        benchmarks.append(spec)
    return SuiteSpec(suite=suite.suite, description=suite.description, benchmarks=benchmarks), notes
