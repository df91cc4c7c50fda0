"""The runner's half of a result's fingerprint: the machine it runs on (CPU model and count, kernel,
EC2 instance type from instance metadata) joined with what the orchestrator put in the plan
(runner class, spec digest, the target's placement, class and storage) and the version the server
reported. Comparisons never cross a fingerprint key (results.Fingerprint.key)."""

from __future__ import annotations

import functools
import os
import platform
import urllib.request
from pathlib import Path

from benchwright.results import FARGATE_HOST, Fingerprint, NetworkFloor, ResultDocument
from benchwright.runner.entry import AZ_ENV, AZ_ID_ENV
from benchwright.runner.plan import PlanContext

IMDS = "http://169.254.169.254/latest"
IMDS_TIMEOUT_S = 1.0


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The first ``model name`` of /proc/cpuinfo (x86), or what the platform says."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model"):
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_count() -> int:
    """The CPUs this process may run on (a container's limit, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 0


@functools.cache
def ec2_instance_type() -> str | None:
    """The instance type from the EC2 instance metadata service (IMDSv2), or None where there is
    none (a container in the rehearsal, a laptop). Asked once per runner, within a second."""
    try:
        put = urllib.request.Request(
            f"{IMDS}/api/token", method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"}
        )
        with urllib.request.urlopen(put, timeout=IMDS_TIMEOUT_S) as response:
            token = response.read().decode()
        get = urllib.request.Request(
            f"{IMDS}/meta-data/instance-type", headers={"X-aws-ec2-metadata-token": token}
        )
        with urllib.request.urlopen(get, timeout=IMDS_TIMEOUT_S) as response:
            return response.read().decode().strip() or None
    except OSError:
        return None


def instance_type(context: PlanContext) -> str | None:
    """EC2: the metadata service's answer, else the type the launcher asked for; Fargate publishes
    no host type; None locally."""
    if context.runner_platform == "fargate":
        return FARGATE_HOST
    if context.runner_platform == "ec2":
        return ec2_instance_type() or context.instance_type
    return None


def runner_fingerprint(context: PlanContext, engine_version: str | None) -> Fingerprint:
    """The fingerprint of a document this runner measured against a server reporting
    ``engine_version``."""
    return Fingerprint(
        runner_class=context.runner_class,
        runner_platform=context.runner_platform,
        instance_type=instance_type(context),
        cpu_model=cpu_model(),
        cpu_count=cpu_count(),
        kernel=platform.release(),
        runner_az=os.environ.get(AZ_ENV) or None,
        runner_az_id=os.environ.get(AZ_ID_ENV) or None,
        target_az=context.target_az,
        target_az_id=context.target_az_id,
        engine_version=engine_version,
        target_class=context.target_class,
        storage=context.storage,
        spec_digest=context.spec_digest,
    )


def stamp(
    doc: ResultDocument, context: PlanContext, floor: NetworkFloor | None = None, no_floor: str | None = None
) -> None:
    """Put the fingerprint and the network floor (``floor.network_floor``) on a measured document."""
    doc.fingerprint = runner_fingerprint(context, doc.server_version)
    doc.network_floor = floor
    if no_floor:
        doc.flag("no_network_floor", "info", f"the network floor was not measured: {no_floor}")
