"""Docs that are generated or promised stay true: the state-machine diagrams match the ASL, and the
deploy guide covers every CLI command and stage setting."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_state_machine_diagrams_match_the_asl() -> None:
    from infra.diagram import BEGIN, generated_section

    text = (ROOT / "docs" / "state-machine.md").read_text()
    assert BEGIN in text
    assert text.split(BEGIN, 1)[1] == generated_section().split(BEGIN, 1)[1], (
        "regenerate: .venv/bin/python -m infra.diagram docs/state-machine.md"
    )


def test_diagrams_show_every_state() -> None:
    import json

    from infra.diagram import all_diagrams

    for name, block in all_diagrams().items():
        asl = json.loads((ROOT / "statemachines" / name).read_text())
        for state in asl["States"]:
            assert state.rstrip("?") in block


def test_deploy_guide_covers_commands_and_settings() -> None:
    from infra.config import StageConfig

    guide = (ROOT / "docs" / "deploy.md").read_text()
    for command in ("benchwright deploy", "benchwright destroy", "benchwright submit", "benchwright status",
                    "benchwright results", "make synth"):  # fmt: skip
        assert command in guide, command
    for field in StageConfig.model_fields:
        assert f"{field}:" in guide, f"stage setting {field} is not documented"


def test_deploy_guide_states_the_default_sink_and_the_image_build_as_they_are() -> None:
    from infra.config import parse_stage

    guide = (ROOT / "docs" / "deploy.md").read_text()
    default = parse_stage({}).sink.kind
    assert f"`sink.kind: {default}` (default)" in guide
    assert f"kind: {default}  " in guide  # the example stage file shows the default
    assert "podman" in guide.split("## 2.", 1)[0]  # the prerequisites name the engine bootstrap installs
    assert "it has not been built" not in guide and "a first deploy with the defaults" in guide.lower()
