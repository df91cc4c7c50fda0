"""Every target kind's spec model declares what the estimates, the stages and the spec's checks ask of
it (spec/target_facts.py), and every registered AWS kind names that model: a kind that leaves a fact
out is refused when its class is made, never read as a default."""

from __future__ import annotations

import typing
from typing import Literal

import pytest

from benchwright.providers.aws.targets import TARGETS
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
    (its folder's events.py) and the operation's steps: the two agree."""
    kind = KINDS[name]
    assert kind.spec is not None and kind.provider is not None
    facts = kind.spec.facts
    calls = dict(kind.events)
    assert set(facts.events) == set(calls) and len(calls) == len(kind.events)
    # each call is in its kind's folder (kinds/NAME/events.py), the one module the IAM coverage reads
    home = kind.target.rpartition(".")[0] if kind.target else ""
    assert all(call.__module__ == f"{home}.events" for call in calls.values()), home
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


# One representative target per kind, and more where a kind's answer turns on a field.
SAMPLES = {
    "local-pg": {"provider": "local", "engine": "postgres"},
    "local-mysql": {"provider": "local", "engine": "mysql"},
    "local-redis-64mb": {"provider": "local", "engine": "redis", "settings": {"maxmemory": "64mb"}},
    "endpoint": {"provider": "endpoint", "engine": "postgres", "hosts": ["10.0.0.1:5432"],
                 "settings": {"max_connections": 500}},
    "rds-pg-gp2": {"provider": "rds", "engine": "postgres", "engine_version": "16.4",
                   "instance_class": "db.r6g.large", "storage": {"type": "gp2", "size_gb": 100}},
    "rds-mysql-t3": {"provider": "rds", "engine": "mysql", "engine_version": "8.0.36",
                     "instance_class": "db.t3.micro", "settings": {"max_connections": 500},
                     "storage": {"type": "gp2", "size_gb": 20, "burst_start_pct": 40}},
    "aurora-serverless": {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
                          "serverless_v2": {"min_acu": 0.5, "max_acu": 4}},
    "aurora-t3": {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
                  "instance_class": "db.t3.medium"},
    "elasticache": {"provider": "elasticache", "engine": "redis", "engine_version": "7.1",
                    "node_type": "cache.t4g.micro", "availability_zone": "eu-west-1a",
                    "settings": {"maxclients": 1000}},
    "memorydb": {"provider": "memorydb", "engine": "redis", "engine_version": "7.1",
                 "node_type": "db.r6g.large"},
    "ec2-gp2": {"provider": "ec2", "engine": "redis", "template": "redis-protocol",
                "instance_type": "m6i.large", "volume": {"type": "gp2", "size_gb": 500}},
    "ec2-instance-store": {"provider": "ec2", "engine": "redis", "template": "redis-protocol",
                           "instance_type": "i3.large"},
}  # fmt: skip
GIB = 1024**3
# What the capacity preflight and the burst forecast read of each (the tables they kept by provider
# before the kinds answered for themselves): (usable connections, usable memory bytes, burst storage
# (type, GiB, IOPS, engine, field, start %), CPU credit class).
EXPECTED: dict[str, tuple[int | None, int | None, tuple[object, ...] | None, str | None]] = {
    "local-pg": (100 - 3, None, None, None),
    "local-mysql": (151, None, None, None),
    "local-redis-64mb": (10000 - 32, 64 * 1024**2, None, None),
    "endpoint": (None, None, None, None),  # someone else's server: its settings are not what it holds
    "rds-pg-gp2": (1802 - 5, None, ("gp2", 100, None, "postgres", "target.storage", 100.0), "db.r6g.large"),
    "rds-mysql-t3": (500 - 1, None, ("gp2", 20, None, "mysql", "target.storage", 40.0), "db.t3.micro"),
    "aurora-serverless": (None, None, None, None),
    "aurora-t3": (min(int(4 * GIB / 9531392), 5000) - 5, None, None, None),
    "elasticache": (1000 - 32, int(0.5 * 0.75 * GIB), None, None),
    "memorydb": (None, int(13.07 * GIB), None, None),
    "ec2-gp2": (None, None, ("gp2", 500, None, "ebs", "target.volume", 100.0), None),
    "ec2-instance-store": (None, None, None, None),
}


def test_every_kind_has_a_sample() -> None:
    assert {SAMPLES[name]["provider"] for name in SAMPLES} == set(MODELS)
    assert set(EXPECTED) == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_kind_answers_what_the_preflight_and_the_forecast_ask(name: str) -> None:
    target = parse_target(SAMPLES[name])
    connections, memory, storage, cpu_class = EXPECTED[name]
    assert isinstance(target.reserved_connections(), int) and target.reserved_connections() >= 0
    usable = target.usable_connections()
    assert (usable and usable[0]) == connections
    if usable is not None:  # the figure's source says where it comes from and what is reserved
        assert usable[1] and f"less {target.reserved_connections()} reserved" in usable[1]
    held = target.usable_memory()
    assert (held and held[0]) == memory
    burst = target.burst_storage()
    assert (burst and (burst.kind, burst.size_gib, burst.iops, burst.engine, burst.field,
                       burst.burst_start_pct)) == storage  # fmt: skip
    assert target.cpu_credit_class() == cpu_class


def test_the_sources_read_as_the_preflight_has_always_written_them() -> None:
    rds = parse_target(SAMPLES["rds-pg-gp2"]).usable_connections()
    assert rds is not None and rds[1] == "the rds default for db.r6g.large (16 GiB): 1802, less 5 reserved"
    local = parse_target(SAMPLES["local-pg"]).usable_connections()
    assert local == (97, "the local postgres server's default max_connections 100 less 3 reserved")
    written = parse_target(SAMPLES["rds-mysql-t3"]).usable_connections()
    assert written == (499, "target.settings.max_connections 500 less 1 reserved")
    cache = parse_target(SAMPLES["elasticache"]).usable_memory()
    assert cache is not None
    assert cache[1] == "cache.t4g.micro 0.5 GiB x 1 shard(s), less ElastiCache's 25% reserved memory"
    memorydb = parse_target(SAMPLES["memorydb"]).usable_memory()
    assert memorydb is not None and memorydb[1] == "db.r6g.large 13.07 GiB x 1 shard(s)"
