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


ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:{}"


def _cloud(secret_name: str, local: bool = False) -> dict:
    target = ({"provider": "local", "engine": "redis"} if local
              else {"provider": "elasticache", "engine": "redis", "engine_version": "7.1", "node_type": "cache.t4g.small",
                 "availability_zone": "eu-west-1a"})  # fmt: skip
    return {
        "name": "slack-owned",
        "target": target,
        "runner": {"platform": "local" if local else "fargate"},
        "workload": {"name": "ycsb"},
        "notify": {"slack": {"webhook_secret_arn": ARN.format(secret_name)}},
    }


@pytest.mark.parametrize(
    "name", ["benchwright/slack-AbCdEf", "benchwright/slack/team-a-AbCdEf", "benchwright/slack/team-a"]
)
def test_a_cloud_specs_slack_secret_under_the_convention_is_accepted(name: str) -> None:
    from benchwright.spec import parse_spec

    assert parse_spec(_cloud(name)).notify.slack.webhook_secret_arn == ARN.format(name)  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["team-slack-AbCdEf", "benchwright/slackers-AbCdEf", "benchwright-slack/x"])
def test_a_cloud_specs_slack_secret_outside_the_convention_is_refused_naming_the_field(name: str) -> None:
    from benchwright.spec import parse_spec

    with pytest.raises(SpecError) as info:
        parse_spec(_cloud(name))
    message = str(info.value)
    assert "notify.slack.webhook_secret_arn" in message and "benchwright/slack/<name>" in message


def test_a_local_run_reads_any_secret_with_the_callers_own_credentials() -> None:
    from benchwright.spec import parse_spec

    assert parse_spec(_cloud("team-slack-AbCdEf", local=True)).notify.slack is not None
