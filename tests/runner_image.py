"""What the runner container runs, read from runner-image/Dockerfile as Docker and ECS read it.

ECS starts a task's container with the image's ENTRYPOINT followed by the container override's
``command``, which replaces CMD. ``container_argv`` composes the two the same way and follows a script
ENTRYPOINT to its ``exec`` line, so tests can parse (or run) exactly what a task would run.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "runner-image" / "Dockerfile"


def instruction(name: str) -> list[str]:
    """The last ``NAME [...]`` (exec form) instruction of the Dockerfile."""
    found = re.findall(rf"^{name}\s+(\[.*\])\s*$", DOCKERFILE.read_text(), flags=re.MULTILINE)
    assert found, f"no exec-form {name} in {DOCKERFILE}"
    value: list[str] = json.loads(found[-1])
    return value


def copied_from(image_path: str) -> Path:
    """The repository file a ``COPY src dest`` puts at ``image_path`` (build context = repo root)."""
    for src, dest in re.findall(r"^COPY\s+(\S+)\s+(\S+)\s*$", DOCKERFILE.read_text(), flags=re.MULTILINE):
        if dest == image_path:
            return ROOT / src
    raise AssertionError(f"nothing in the Dockerfile is copied to {image_path}")


def exec_line(script: Path) -> list[str]:
    """The words of the script's one ``exec`` line, without ``exec``."""
    lines = [line for line in script.read_text().splitlines() if line.strip().startswith("exec ")]
    assert len(lines) == 1, f"{script} must end in one exec line, found {lines}"
    return shlex.split(lines[0])[1:]


def container_argv(command: list[str] | None) -> list[str]:
    """What the container's process runs: ENTRYPOINT + (override command, else CMD), with a script
    entrypoint followed to its exec line and its "$@" replaced by the arguments."""
    entrypoint, cmd = instruction("ENTRYPOINT"), instruction("CMD")
    args = cmd if command is None else command
    head, *rest = entrypoint
    if head.startswith("/"):  # a script the image carries: what does it exec?
        inner = exec_line(copied_from(head))
        assert inner[-1] == "$@", inner
        return [*inner[:-1], *rest, *args]
    return [*entrypoint, *args]


def entrypoint_script() -> Path | None:
    """The repository file the image's ENTRYPOINT runs, when it is a script the image carries."""
    head = instruction("ENTRYPOINT")[0]
    return copied_from(head) if head.startswith("/") else None


def docker_run(script: str, image: str) -> tuple[dict[str, str], list[str]]:
    """An EC2 runner's user-data: the ``-e`` variables and the arguments after the image of its
    ``docker run`` line (what follows ENTRYPOINT in the container, as the ECS override does)."""
    (line,) = [x for x in script.splitlines() if x.startswith("docker run ")]
    words = shlex.split(line)
    at = words.index(image)
    env = dict(words[i + 1].split("=", 1) for i in range(at) if words[i] == "-e")
    return env, words[at + 1 :]
