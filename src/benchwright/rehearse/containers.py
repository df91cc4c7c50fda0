"""The runner image in a real container (podman, or docker where an engine runs), as ECS would start it.

Every container carries the label ``benchwright.rehearsal=<id>``; only containers with the rehearsal's
own label are ever stopped or removed. Secret values reach the container as ``-e NAME`` with the value
in the engine process's environment, so they never appear on a command line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from benchwright.rehearse.stack import RehearsalError

LABEL = "benchwright.rehearsal"
# This machine kind: crun fails on hybrid cgroups, and raising a ulimit is refused (docs/deploy.md).
PODMAN_RUN = ["--runtime", "runc", "--ulimit", "nproc=4096:4096", "--ulimit", "nofile=4096:4096"]


def engine() -> str:
    """podman when installed, else docker with a running engine."""
    chosen = os.environ.get("BENCHWRIGHT_CONTAINER_ENGINE")
    if chosen:
        return chosen
    if shutil.which("podman"):
        return "podman"
    if shutil.which("docker"):
        ok = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30)
        if ok.returncode == 0:
            return "docker"
    raise RehearsalError("no container engine: install podman (scripts/bootstrap does) or run Docker")


@dataclass
class ContainerSpec:
    """What ECS (or EC2 user-data) composes: image, optional entrypoint override, argv, environment."""

    name: str
    image: str
    args: list[str]
    environment: dict[str, str]
    entrypoint: list[str] | None = None
    user: str | None = None  # e.g. "0": EC2 user-data runs as root
    volumes: dict[str, str] = field(default_factory=dict)  # host directory -> container path (read-only)


class Containers:
    """Start, watch, stop and list the rehearsal's containers."""

    def __init__(self, rehearsal_id: str, tool: str | None = None) -> None:
        self.rehearsal_id = rehearsal_id
        self.tool = tool or engine()

    def _base(self) -> list[str]:
        return PODMAN_RUN if self.tool == "podman" else []

    def start(self, spec: ContainerSpec) -> str:
        """``run -d``: returns the container id once the process has started."""
        cmd = [self.tool, "run", "-d", *self._base(), "--network", "host", "--name", spec.name]
        cmd += ["--label", f"{LABEL}={self.rehearsal_id}"]
        if spec.user is not None:
            cmd += ["--user", spec.user]
        for host, inside in spec.volumes.items():
            cmd += ["-v", f"{host}:{inside}:ro"]
        env = dict(os.environ)
        for key, value in spec.environment.items():
            cmd += ["-e", key]
            env[key] = value
        if spec.entrypoint is not None:
            # ECS entryPoint: the first word is the entrypoint, the rest come before the command
            cmd += ["--entrypoint", spec.entrypoint[0]] if spec.entrypoint else ["--entrypoint", ""]
        cmd.append(spec.image)
        if spec.entrypoint:
            cmd += spec.entrypoint[1:]
        cmd += spec.args
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise RehearsalError(f"{self.tool} run {spec.name}: {done.stderr.strip()[-400:]}")
        return done.stdout.strip()

    def wait(self, name: str) -> int:
        """Block until the container exits; its exit code."""
        done = subprocess.run([self.tool, "wait", name], capture_output=True, text=True, check=False)
        try:
            return int(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return 255

    def logs(self, name: str) -> str:
        done = subprocess.run(
            [self.tool, "logs", name], capture_output=True, text=True, check=False, timeout=60
        )
        return done.stdout + done.stderr

    def kill(self, name: str) -> None:
        subprocess.run([self.tool, "kill", name], capture_output=True, check=False, timeout=60)

    def remove(self, name: str) -> None:
        subprocess.run([self.tool, "rm", "-f", name], capture_output=True, check=False, timeout=120)

    def running(self) -> list[str]:
        """Names of this rehearsal's containers that exist (running or not)."""
        done = subprocess.run(
            [
                self.tool,
                "ps",
                "-a",
                "--filter",
                f"label={LABEL}={self.rehearsal_id}",
                "--format",
                "{{.Names}}",
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        return [line for line in done.stdout.split() if line]

    def remove_all(self) -> list[str]:
        """Remove every container with this rehearsal's label; the names removed."""
        names = self.running()
        for name in names:
            self.remove(name)
        return names
