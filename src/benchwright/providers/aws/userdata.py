"""User-data of an EC2 runner: the same runner image the Fargate task runs, started with Docker on a
stock Amazon Linux 2023 host (the stack resolves the AMI from AWS's public SSM parameter).

Nothing is baked into an AMI, so the host installs what it needs at boot: Docker from the AL2023
repositories (served from S3, so the S3 gateway endpoint carries them when the VPC has no NAT) and
the image from ECR (the ECR API/Docker endpoints, or the NAT). The runner's arguments are the ECS
task's command override (``runner.entry.runner_arguments``); the container shares the host's network (latency as
the host sees it) and the instance powers off afterwards, which terminates it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

ECR_HOST = re.compile(r"^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?/")
LOG = "/var/log/benchwright-runner.log"


def runner_user_data(image: str, command: Sequence[str], env: Mapping[str, str], region: str) -> str:
    """The boot script; ``command`` is what the ECS task's command override carries (after the
    image's ENTRYPOINT), so ``docker run IMAGE COMMAND`` starts exactly what Fargate starts."""
    if not image:
        raise ValueError("an EC2 runner needs the runner image URI (BENCHWRIGHT_RUNNER_IMAGE)")
    lines = [
        "#!/bin/bash",
        "# Benchwright EC2 runner: install Docker, pull the runner image, run it once, power off.",
        "set -uo pipefail",
        f"exec > >(tee -a {LOG}) 2>&1",
        "trap 'shutdown -h now' EXIT  # the instance terminates itself whatever happens below",
        "dnf install -y docker || exit 1",
        "systemctl start docker || exit 1",
    ]
    ecr = ECR_HOST.match(image)
    if ecr:
        registry = image.split("/", 1)[0]
        lines.append(
            f"aws ecr get-login-password --region {shlex.quote(ecr.group(2))} "
            f"| docker login --username AWS --password-stdin {shlex.quote(registry)} || exit 1"
        )
    lines.append(f"docker pull {shlex.quote(image)} || exit 1")
    run = ["docker", "run", "--rm", "--network", "host", "-e", f"AWS_REGION={region}"]
    run += ["-e", f"AWS_DEFAULT_REGION={region}"]
    for key, value in sorted(env.items()):
        run += ["-e", f"{key}={value}"]
    lines.append(shlex.join([*run, image, *command]))
    lines.append('echo "benchwright runner exited with $?"')
    return "\n".join(lines) + "\n"
