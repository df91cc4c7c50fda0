"""Every target kind's spec model declares what the estimates, the stages and the spec's checks ask of
it (spec/target_facts.py), and every registered AWS kind names that model: a kind that leaves a fact
out is refused when its class is made, never read as a default."""

from __future__ import annotations

import typing
from typing import Literal

import pytest

from benchwright.providers.aws.targets import TARGETS, events
from benchwright.providers.aws.targets.kinds import kinds
from benchwright.providers.aws.targets.operations import SHORT
from benchwright.providers.base import Target
from benchwright.spec import LocalTarget, parse_target
from benchwright.spec.target_facts import TargetBase, TargetFacts
from benchwright.spec.targets import PROVIDERS, TargetSpec

KINDS = kinds()
MODELS = {typing.get_args(m.model_fields["provider"].annotation)[0]: m for m in typing.get_args(
    typing.get_args(TargetSpec)[0])}  # fmt: skip


def test_every_provider_has_one_model_with_its_facts() -> None:
    assert sorted(MODELS) == sorted(PROVIDERS)
    for provider, model in MODELS.items():
        facts = model.facts
        assert isinstance(facts, TargetFacts), provider
        assert facts.provision_s >= 0 and facts.teardown_s >= 0
        # the run waits longer for a target than it expects provisioning to take
        assert facts.ready_timeout_s > facts.provision_s, provider


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_aws_kind_names_the_spec_model_of_its_provider(name: str) -> None:
    kind = KINDS[name]
    if kind.provider is None:  # the runner's kind serves no target section
        assert kind.spec is None
        return
    assert kind.spec is MODELS[kind.provider]
    # a kind Benchwright owns leaves resources the janitor finds; someone else's database leaves none
    assert kind.spec.facts.owned == bool(kind.resources)


def test_a_kind_model_without_its_facts_is_refused_when_its_class_is_made() -> None:
    with pytest.raises(TypeError, match="facts = TargetFacts"):

        class Toy(TargetBase):
            provider: Literal["toy"]

    with pytest.raises(TypeError, match="ready_timeout_s"):
        TargetFacts(provision_s=1.0, teardown_s=1.0)  # type: ignore[call-arg]


def test_the_ready_timeout_is_the_kinds_unless_a_local_spec_writes_its_own() -> None:
    rds = parse_target({"provider": "rds", "engine": "postgres", "engine_version": "16.4",
                        "instance_class": "db.m6g.large", "storage": {"size_gb": 20}})  # fmt: skip
    assert rds.ready_timeout() == 3600.0
    assert parse_target({"provider": "local", "engine": "postgres"}).ready_timeout() == 120.0
    written = parse_target({"provider": "local", "engine": "postgres", "startup_timeout_s": 30})
    assert isinstance(written, LocalTarget) and written.ready_timeout() == 30.0


@pytest.mark.parametrize("name", sorted(k for k, kind in KINDS.items() if kind.provider is not None))
def test_each_aws_kind_allows_exactly_the_events_and_operations_its_target_does(name: str) -> None:
    """The spec check reads the model's facts; the AWS target does the event's API call
    (providers/aws/targets/events.py) and the operation's steps: the two agree."""
    kind = KINDS[name]
    assert kind.spec is not None and kind.provider is not None
    facts = kind.spec.facts
    calls = dict(kind.events)
    assert set(facts.events) == set(calls) and len(calls) == len(kind.events)
    assert all(call.__module__ == events.__name__ for call in calls.values())
    if "scale" in facts.events:
        assert facts.scale_key is not None
    # an operation's steps are the target's own (RDS's and Aurora's API calls, EC2's node replacement),
    # not the base's, which refuses every operation on AWS
    overridden = TARGETS[kind.provider].operation_step is not Target.operation_step
    assert overridden == bool(facts.operations)
    assert set(facts.operations) <= {*SHORT, "node_replace"}


def test_only_someone_elses_database_names_its_hosts() -> None:
    endpoint = parse_target({"provider": "endpoint", "engine": "redis", "hosts": ["10.0.0.1:6379"]})
    assert not endpoint.facts.owned and endpoint.named_hosts() == ["10.0.0.1:6379"]
    assert parse_target({"provider": "local", "engine": "redis"}).named_hosts() == []
    assert [m for m in MODELS.values() if not m.facts.owned] == [MODELS["endpoint"]]
