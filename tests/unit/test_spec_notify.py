"""``notify`` in a spec file: YAML 1.1 reads a bare ``on:`` key as True; the documented form parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.errors import SpecError
from benchwright.spec import load_spec

SPEC = """\
name: notify-on
target: {{provider: local, engine: redis}}
workload: {{name: ycsb, files: [workloada]}}
notify:
{notify}
"""


@pytest.mark.parametrize("rule", ["always", "success", "failure", "regression"])
def test_a_bare_on_key_in_yaml_is_the_notify_rule(tmp_path: Path, rule: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(notify=f"  on: {rule}\n  slack: {{webhook_env: TEAM_HOOK}}"))
    spec = load_spec(path)
    assert spec.notify.on == rule
    assert spec.notify.slack is not None and spec.notify.slack.webhook_env == "TEAM_HOOK"


def test_the_flow_form_from_the_docs_parses(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(notify="").replace("notify:\n\n", "notify: {on: failure}\n"))
    assert load_spec(path).notify.on == "failure"


def test_an_unknown_rule_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(notify="  on: sometimes"))
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    assert "notify.on" in str(raised.value)


def test_a_spec_read_by_pyyaml_elsewhere_still_parses() -> None:
    """A client that loads its spec with plain PyYAML (YAML 1.1) sends ``{true: "failure"}``."""
    import yaml

    from benchwright.spec import parse_spec

    data = yaml.safe_load(SPEC.format(notify="  on: failure"))
    assert True in data["notify"]  # what YAML 1.1 made of the key
    assert parse_spec(data).notify.on == "failure"
