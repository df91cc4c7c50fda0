"""What the orchestrator adds to a result's fingerprint: the runner's class and platform, the digest
of the spec fields that change what is measured, and the target's placement, class and storage.
It travels to the runner in the plan (``runner.plan.PlanContext``); the runner adds its machine and
the server's version (runner/fingerprint.py)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from benchwright.runner.plan import PlanContext
from benchwright.spec import BenchmarkSpec

# the spec sections that change what is measured; name, description, notify, tags, repeats and
# validity do not (they name, tell, label, repeat or judge the same measurement)
DIGEST_SECTIONS = ("target", "runner", "workload", "events", "operations")
# runner.class is not digested: it follows from the platform (spec/runners.py), which is, and the
# fingerprint's key carries the class itself; `class: measured` and `platform: ec2` are one spec
NOT_DIGESTED: dict[str, Any] = {"runner": {"runner_class"}}


def spec_digest(spec: BenchmarkSpec) -> str:
    """A short stable digest of the spec's measuring sections, defaults left out: a field this
    version adds with its default leaves the digest of an older spec unchanged, and so does
    writing out a default explicitly."""
    data: dict[str, Any] = spec.model_dump(
        mode="json", exclude_defaults=True, include=set(DIGEST_SECTIONS), exclude=NOT_DIGESTED
    )
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def plan_context(spec: BenchmarkSpec, target_facts: dict[str, str | None]) -> PlanContext:
    """The plan's context for one cell: the spec's side and the target's (``fingerprint_facts``)."""
    platform = spec.runner.platform
    return PlanContext(
        runner_class=spec.runner.cls,  # Fargate (smoke) runs are never compared with measured ones
        runner_platform=platform,
        instance_type=spec.runner.size.instance_type if platform == "ec2" else None,
        spec_digest=spec_digest(spec),
        target_az=target_facts.get("target_az"),
        target_az_id=target_facts.get("target_az_id"),
        target_class=target_facts.get("target_class"),
        storage=target_facts.get("storage"),
    )
