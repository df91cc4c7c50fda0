"""The README's promises hold: its spec validates and the commands it names exist."""

from __future__ import annotations

import re
from pathlib import Path

from benchwright.cli import COMMANDS
from benchwright.spec import expand_matrix, load_spec

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_spec_validates_and_expands(tmp_path: Path) -> None:
    block = re.search(r"## A spec\n\n```yaml\n(.*?)```", README.read_text(), re.S)
    assert block, "README lost its spec example"
    path = tmp_path / "readme.yaml"
    path.write_text(block.group(1))
    spec = load_spec(path)
    assert spec.name == "ycsb-a-postgres"
    assert len(expand_matrix(spec)) == 3  # workload.phases.run.threads: [8, 32, 128]


def test_every_benchwright_command_in_the_readme_exists() -> None:
    named = set(re.findall(r"`benchwright ([a-z-]+)", README.read_text()))
    assert named, "README names no command"
    assert named <= set(COMMANDS), named - set(COMMANDS)
