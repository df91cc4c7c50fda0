"""The spec: valid specs load and expand; every invalid one fails naming the field path, before anything runs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.errors import CapabilityError, SpecError
from benchwright.sharing import estimated_seconds as estimate_duration
from benchwright.spec import (
    BenchmarkSpec,
    enabled_phases,
    expand_matrix,
    load_spec,
    load_suite,
    parse_spec,
    parse_suite,
    parse_target,
    spec_dict,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

BASE: dict[str, Any] = {
    "name": "t",
    "target": {"provider": "local", "engine": "redis", "settings": {"maxmemory": "64mb"}},
    "workload": {"name": "ycsb", "files": ["workloada"], "properties": {"recordcount": 100}},
}
RDS: dict[str, Any] = {
    "provider": "rds",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.m6i.large",
    "storage": {"type": "gp3", "size_gb": 100},
}


def spec_with(**changes: Any) -> dict[str, Any]:
    """BASE with dotted-path changes applied (None deletes)."""
    data = copy.deepcopy(BASE)
    for path, value in changes.items():
        node = data
        keys = path.split("__")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    return data


def test_minimal_spec_gets_defaults_from_the_model() -> None:
    spec = parse_spec(BASE)
    assert spec.runner.platform == "local"
    assert spec.repeats == 1
    assert spec.validity.max_error_rate == 0.01
    assert [c.cell_id for c in expand_matrix(spec)] == ["default"]


INVALID = [
    ("unknown top-level field", spec_with(colour="blue"), "colour"),
    ("unknown provider", spec_with(target={"provider": "gcp", "engine": "redis"}), "target"),
    ("missing provider", spec_with(target={"engine": "redis"}), "target.provider"),
    ("unknown engine", spec_with(target__engine="oracle"), "target.engine"),
    ("local port out of range", spec_with(target__port=80), "target.port"),
    ("bad setting name", spec_with(target__settings={"max connections": 5}), "target.settings"),
    ("unknown workload", spec_with(workload={"name": "nosuch"}), "workload.name"),
    ("capability mismatch: tpcc on redis", spec_with(workload={"name": "tpcc"}), "target.engine"),
    (
        "ycsb proportions do not sum to 1",
        spec_with(workload__properties={"readproportion": 0.9, "updateproportion": 0.5}),
        "workload.properties.readproportion",
    ),
    (
        "ycsb property not a number",
        spec_with(workload__properties={"recordcount": "lots"}),
        "workload.properties.recordcount",
    ),
    ("unknown property file", spec_with(workload__files=["workloadz"]), "workload"),
    ("threads zero", spec_with(workload__phases={"run": {"threads": 0}}), "workload.phases.run.threads"),
    ("warmup without a bound", spec_with(workload__phases={"warmup": {"threads": 2}}), "workload.phases"),
    ("matrix path that does not exist", spec_with(matrix={"workload.threads": [1, 2]}), "workload.threads"),
    ("empty matrix values", spec_with(matrix={"workload.properties.fieldlength": []}), "matrix"),
    ("repeats zero", spec_with(repeats=0), "repeats"),
    ("local runner count > 1", spec_with(runner={"count": 2}), "runner"),
    ("placement on a local runner", spec_with(runner={"placement": "other-az"}), "runner"),
    ("bad placement", spec_with(runner={"platform": "fargate", "placement": "nowhere"}), "runner.placement"),
    (
        "slack webhook URL in the spec",
        spec_with(notify={"slack": {"webhook_env": "https://hooks.slack.com/services/T/B/X"}}),
        "notify.slack",
    ),
    ("slack without a source", spec_with(notify={"slack": {"channel": "#bench"}}), "notify.slack"),
    ("name with spaces", spec_with(name="my bench"), "name"),
    ("validity out of range", spec_with(validity={"max_error_rate": 2}), "validity.max_error_rate"),
    ("local target with a cloud runner", spec_with(runner={"platform": "fargate"}), ""),
]


@pytest.mark.parametrize(("data", "field"), [(d, f) for _, d, f in INVALID], ids=[i for i, _, _ in INVALID])
def test_invalid_spec_names_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    assert caught.value.field.startswith(field), caught.value
    assert str(caught.value).startswith(caught.value.field)


def test_capability_mismatch_is_a_capability_error() -> None:
    with pytest.raises(CapabilityError, match="needs sql"):
        parse_spec(spec_with(workload={"name": "tpcc"}))


def cloud(target: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**spec_with(target=target, runner={"platform": "fargate"}), **extra}


CLOUD_INVALID = [
    ("io1 without iops", {**RDS, "storage": {"type": "io1", "size_gb": 100}}, "target.storage"),
    (
        "io1 over 50 IOPS/GB",
        {**RDS, "storage": {"type": "io1", "size_gb": 100, "iops": 9000}},
        "target.storage",
    ),
    (
        "magnetic with iops",
        {**RDS, "storage": {"type": "magnetic", "size_gb": 100, "iops": 1000}},
        "target.storage",
    ),
    ("gp2 with iops", {**RDS, "storage": {"type": "gp2", "size_gb": 100, "iops": 3000}}, "target.storage"),
    ("unknown storage type", {**RDS, "storage": {"type": "ssd", "size_gb": 100}}, "target.storage.type"),
    ("bad instance class", {**RDS, "instance_class": "m6i.large"}, "target.instance_class"),
    ("rds engine redis", {**RDS, "engine": "redis"}, "target.engine"),
    ("multi-az with a pinned AZ", {**RDS, "multi_az": True, "availability_zone": "eu-west-1a"}, "target"),
    (
        "aurora serverless without ACUs",
        {"provider": "aurora", "engine": "postgres", "engine_version": "16.4"},
        "target",
    ),
    (
        "aurora ACU range inverted",
        {
            "provider": "aurora",
            "engine": "mysql",
            "engine_version": "8.0",
            "serverless_v2": {"min_acu": 8, "max_acu": 2},
        },
        "target.serverless_v2",
    ),
    (
        "elasticache without an AZ",
        {
            "provider": "elasticache",
            "engine": "redis",
            "engine_version": "7.1",
            "node_type": "cache.r7g.large",
        },
        "target.availability_zone",
    ),
    (
        "elasticache bad AZ",
        {
            "provider": "elasticache",
            "engine": "redis",
            "engine_version": "7.1",
            "node_type": "cache.r7g.large",
            "availability_zone": "moon-1",
        },
        "target.availability_zone",
    ),
    (
        "memorydb without TLS",
        {
            "provider": "memorydb",
            "engine": "redis",
            "engine_version": "7.1",
            "node_type": "db.r7g.large",
            "tls": False,
        },
        "target.tls",
    ),
    (
        "elasticache cluster mode",
        {
            "provider": "elasticache",
            "engine": "redis",
            "engine_version": "7.1",
            "node_type": "cache.r7g.large",
            "availability_zone": "us-east-1a",
            "cluster_mode": True,
            "shards": 3,
        },
        "target",
    ),
    (
        "memorydb with 2 shards",
        {
            "provider": "memorydb",
            "engine": "redis",
            "engine_version": "7.1",
            "node_type": "db.r7g.large",
            "shards": 2,
        },
        "target",
    ),
    (
        "yugabyte with 2 nodes",
        {
            "provider": "ec2",
            "engine": "postgres",
            "template": "yugabytedb-3node",
            "instance_type": "m6i.4xlarge",
            "nodes": 2,
        },
        "target",
    ),
    (
        "redis-protocol template serving SQL",
        {"provider": "ec2", "engine": "postgres", "template": "redis-protocol", "instance_type": "t2.micro"},
        "target",
    ),
    (
        "ec2 io1 volume without iops",
        {
            "provider": "ec2",
            "engine": "redis",
            "template": "redis-protocol",
            "instance_type": "t2.micro",
            "volume": {"type": "io1", "size_gb": 100},
        },
        "target.volume",
    ),
    (
        "ec2 gp2 volume with a throughput (gp3 only)",
        {
            "provider": "ec2",
            "engine": "redis",
            "template": "redis-protocol",
            "instance_type": "t2.micro",
            "volume": {"type": "gp2", "size_gb": 100, "throughput_mbps": 250},
        },
        "target.volume",
    ),
    (
        "ec2 gp3 throughput over 0.25 MiB/s per IOPS",
        {
            "provider": "ec2",
            "engine": "redis",
            "template": "redis-protocol",
            "instance_type": "t2.micro",
            "volume": {"type": "gp3", "size_gb": 100, "throughput_mbps": 1000},  # 3000 IOPS: 750 at most
        },
        "target.volume",
    ),
    (
        "ec2 gp3 iops below the 3000 every gp3 volume has",
        {
            "provider": "ec2",
            "engine": "redis",
            "template": "redis-protocol",
            "instance_type": "t2.micro",
            "volume": {"type": "gp3", "size_gb": 100, "iops": 1000},
        },
        "target.volume",
    ),
]


@pytest.mark.parametrize(
    ("target", "field"), [(t, f) for _, t, f in CLOUD_INVALID], ids=[i for i, _, _ in CLOUD_INVALID]
)
def test_invalid_cloud_setting_names_the_field(target: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(cloud(target))
    assert caught.value.field.startswith(field), caught.value


@pytest.mark.parametrize(
    ("target", "word"),
    [
        ({"provider": "elasticache", "node_type": "cache.r7g.large", "availability_zone": "us-east-1a",
          "cluster_mode": True}, "cluster_mode"),
        ({"provider": "memorydb", "node_type": "db.r7g.large", "shards": 2}, "shards"),
    ],
)  # fmt: skip
def test_more_than_one_redis_shard_is_refused_until_the_runner_speaks_redis_cluster(
    target: dict[str, Any], word: str
) -> None:
    """Validated and then ignored (ElastiCache) or measured with MOVED errors (MemoryDB) before."""
    with pytest.raises(SpecError) as caught:
        parse_spec(cloud({"engine": "redis", "engine_version": "7.1", **target}))
    assert word in str(caught.value) and "Redis Cluster" in str(caught.value)


def test_cloud_target_needs_a_cloud_runner() -> None:
    with pytest.raises(SpecError, match=r"runner\.platform: a rds target needs a cloud runner"):
        parse_spec(spec_with(target=RDS, runner={"platform": "local"}))


def test_a_cloud_targets_runner_is_measured_on_pinned_ec2_unless_the_spec_says_otherwise() -> None:
    """Issue 27: the default is the number one can trust; Fargate is asked for (class smoke)."""
    runner = parse_spec(spec_with(target=RDS, runner=None)).runner
    assert (runner.cls, runner.platform, runner.ec2_instance_type) == ("measured", "ec2", "c6i.large")
    pinned = parse_spec(spec_with(target=RDS, runner={"instance_type": "m6i.xlarge"})).runner
    assert (pinned.cls, pinned.size.instance_type, pinned.instance_type) == (
        "measured",
        "m6i.xlarge",
        "m6i.xlarge",
    )
    smoke = parse_spec(spec_with(target=RDS, runner={"class": "smoke"})).runner
    assert (smoke.cls, smoke.platform, smoke.size.instance_type) == ("smoke", "fargate", None)
    assert parse_spec(spec_with(target=RDS, runner={"platform": "fargate"})).runner.cls == "smoke"
    # an endpoint is still reached from a local runner unless a class is named
    endpoint = {"provider": "endpoint", "engine": "postgres", "hosts": ["127.0.0.1:15432"]}
    assert parse_spec(spec_with(target=endpoint, runner=None)).runner.cls == "local"
    with pytest.raises(SpecError, match="a local runner has no class"):
        parse_spec(spec_with(runner={"class": "measured", "platform": "local"}))


def test_a_runner_class_that_is_not_a_string_is_a_spec_error_naming_it() -> None:
    """It was a TypeError (an unhashable value looked up among the classes), found by the fuzz test."""
    with pytest.raises(SpecError, match=r"runner\.class"):
        parse_spec(spec_with(target=RDS, runner={"class": ["smoke"]}))


def test_both_spellings_of_the_runner_type_are_one_spec_and_dump_as_written() -> None:
    """runner.instance_type is kept in size.instance_type; a filled-in default or a platform that
    follows from the class is not dumped, so a matrix may vary runner.class alone."""
    from benchwright.spec import expand_matrix
    from benchwright.spec.model import spec_dict
    from benchwright.stages.context import spec_digest

    top = parse_spec(spec_with(target=RDS, runner={"instance_type": "m6i.xlarge"}))
    nested = parse_spec(
        spec_with(target=RDS, runner={"platform": "ec2", "size": {"instance_type": "m6i.xlarge"}})
    )
    assert spec_digest(top) == spec_digest(nested)
    assert spec_dict(top)["runner"] == {"class": "measured", "size": {"instance_type": "m6i.xlarge"}}
    default = parse_spec(spec_with(target=RDS, runner=None))
    assert spec_dict(default)["runner"] == {"class": "measured"}
    assert spec_digest(default) == spec_digest(
        parse_spec(spec_with(target=RDS, runner={"platform": "ec2", "size": {"instance_type": "c6i.large"}}))
    )
    cells = expand_matrix(
        parse_spec({**spec_with(target=RDS, runner=None), "matrix": {"runner.class": ["measured", "smoke"]}})
    )
    assert [(c.spec.runner.cls, c.spec.runner.platform, c.spec.runner.size.instance_type) for c in cells] == [
        ("measured", "ec2", "c6i.large"),
        ("smoke", "fargate", None),
    ]


def test_fan_out_refuses_a_load_it_cannot_split_before_anything_is_created() -> None:
    def fanned(workload: dict[str, Any]) -> dict[str, Any]:
        return {**cloud(RDS), "workload": workload, "runner": {"platform": "fargate", "count": 3}}

    with pytest.raises(SpecError) as err:
        parse_spec(fanned({"name": "tpcc", "properties": {"warehouses": 10}}))
    assert err.value.field == "runner.count" and "3 runners would each load the whole tpcc" in str(err.value)
    loaded_beforehand = {
        "name": "tpcc",
        "properties": {"warehouses": 10},
        "phases": {"load": {"enabled": False}},
    }
    assert parse_spec(fanned(loaded_beforehand)).runner.count == 3
    assert (
        parse_spec(fanned({"name": "ycsb", "files": ["workloada"]})).runner.count == 3
    )  # split by key range


def test_every_cloud_target_kind_validates() -> None:
    targets = [
        RDS,
        {
            **RDS,
            "engine": "mysql",
            "storage": {"type": "io2", "size_gb": 100, "iops": 20000},
            "multi_az": True,
        },
        {**RDS, "storage": {"type": "magnetic", "size_gb": 100}},
        {
            "provider": "aurora",
            "engine": "postgres",
            "engine_version": "16.4",
            "serverless_v2": {"min_acu": 0.5, "max_acu": 16},
        },
        {
            "provider": "aurora",
            "engine": "mysql",
            "engine_version": "8.0",
            "instance_class": "db.r6g.large",
            "instances": 2,
        },
        {
            "provider": "elasticache",
            "engine": "redis",
            "cache_engine": "valkey",
            "engine_version": "8.0",
            "node_type": "cache.r7g.large",
            "availability_zone": "euw1-az2",
        },
        {"provider": "memorydb", "engine": "redis", "engine_version": "7.1", "node_type": "db.r7g.large"},
        {
            "provider": "ec2",
            "engine": "postgres",
            "template": "yugabytedb-3node",
            "instance_type": "m6i.4xlarge",
            "volume": {"type": "gp3", "size_gb": 500},
        },
        {
            "provider": "ec2",
            "engine": "redis",
            "template": "redis-protocol",
            "server": "ardb",
            "instance_type": "t2.micro",
            "volume": {"type": "io1", "size_gb": 120, "iops": 6000},
        },
        {"provider": "endpoint", "engine": "redis", "hosts": ["10.0.0.5:6379"], "password_env": "REDIS_PW"},
    ]
    for target in targets:
        spec = parse_spec(cloud(target))
        assert spec.target.provider == target["provider"]
    yb = parse_spec(cloud(targets[7])).target
    assert (yb.nodes, yb.replication_factor) == (3, 3)  # type: ignore[union-attr]


def test_aurora_serverless_instance_class_may_be_written_out() -> None:
    """``db.serverless`` is the documented value; written explicitly it was refused as not FAMILY.SIZE."""
    aurora = {
        "provider": "aurora",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.serverless",
        "serverless_v2": {"min_acu": 0.5, "max_acu": 8},
    }
    assert parse_spec(cloud(aurora)).target.instance_class == "db.serverless"  # type: ignore[union-attr]
    with pytest.raises(SpecError) as caught:
        parse_spec(cloud({**aurora, "instance_class": "db.serverless2"}))
    assert caught.value.field == "target.instance_class"


def test_target_defaults_the_providers_read_are_the_models() -> None:
    """The providers read these typed fields and default nothing themselves (issue 10)."""
    cache = parse_target(
        {
            "provider": "elasticache",
            "engine": "redis",
            "engine_version": "7.1",
            "node_type": "cache.r7g.large",
            "availability_zone": "eu-west-1a",
        }
    )
    assert cache.tls is False  # type: ignore[union-attr]  # what ElastiCache runs have always used
    endpoint = parse_target({"provider": "endpoint", "engine": "postgres", "hosts": ["h:5432"]})
    assert (endpoint.user, endpoint.database) == ("bench", "bench")  # type: ignore[union-attr]
    yb = parse_target({"provider": "ec2", "engine": "postgres", "template": "yugabytedb-3node",
                       "instance_type": "m6i.large"})  # fmt: skip
    assert yb.yugabytedb_version == "2024.2.0.0"  # type: ignore[union-attr]


def test_a_target_section_on_its_own_names_the_field() -> None:
    with pytest.raises(SpecError) as caught:
        parse_target(
            {"provider": "rds", "engine": "postgres", "engine_version": "16.4", "storage": {"size_gb": 100}}
        )
    assert caught.value.field == "target.instance_class"
    with pytest.raises(SpecError) as caught:
        parse_target({"provider": "nowhere"})
    assert caught.value.field == "target" and "unknown provider" in caught.value.detail


def test_endpoint_password_is_an_env_name_never_the_password() -> None:
    target = {"provider": "endpoint", "engine": "redis", "hosts": ["h:6379"], "password_env": "hunter2!"}
    with pytest.raises(SpecError) as caught:
        parse_spec(spec_with(target=target))
    assert caught.value.field == "target.password_env"
    assert "hunter2" not in caught.value.detail


def test_matrix_expands_to_concrete_cells() -> None:
    spec = parse_spec(
        spec_with(
            matrix={"workload.properties.fieldlength": [100, 1000], "workload.phases.run.threads": [1, 4]}
        )
    )
    cells = expand_matrix(spec)
    assert [c.cell_id for c in cells] == [
        "fieldlength=100,threads=1",
        "fieldlength=100,threads=4",
        "fieldlength=1000,threads=1",
        "fieldlength=1000,threads=4",
    ]
    assert cells[3].spec.workload.properties["fieldlength"] == 1000
    assert cells[3].spec.workload.phases.run is not None and cells[3].spec.workload.phases.run.threads == 4
    assert cells[0].spec.matrix == {}


def test_matrix_keys_with_dots_inside_properties() -> None:
    spec = parse_spec(spec_with(matrix={"workload.properties.redis.datatype": ["hash", "set"]}))
    cells = expand_matrix(spec)
    assert [c.spec.workload.properties["redis.datatype"] for c in cells] == ["hash", "set"]
    assert cells[0].cell_id == "redis.datatype=hash"


def test_matrix_value_that_breaks_a_rule_names_the_field_and_cell() -> None:
    data = cloud(
        RDS, matrix={"target.storage": [{"type": "gp2", "size_gb": 100}, {"type": "io1", "size_gb": 100}]}
    )
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    assert caught.value.field.startswith("target.storage")
    assert "matrix cell" in caught.value.detail


def test_matrix_value_that_breaks_a_ycsb_property_is_caught() -> None:
    data = spec_with(matrix={"workload.properties.readproportion": [0.5, 2]})
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    assert caught.value.field == "workload.properties.readproportion"


def test_duration_estimate_grows_with_cells_and_repeats_sharing_target_and_load() -> None:
    one = parse_spec(spec_with(workload__phases={"run": {"duration_s": 30}}))
    four = parse_spec(
        spec_with(
            workload__phases={"run": {"duration_s": 30}},
            matrix={"workload.phases.run.threads": [1, 2]},
            repeats=2,
        )
    )
    assert estimate_duration(one) >= 30
    # threads is a run setting: one target, one load, four run phases (each 30 s + 3 s of stages)
    assert estimate_duration(four) == pytest.approx(estimate_duration(one) + 3 * 33.0)
    two_targets = parse_spec(
        spec_with(
            workload__phases={"run": {"duration_s": 30}}, matrix={"target.settings.maxmemory": ["1mb", "2mb"]}
        )
    )
    assert estimate_duration(two_targets) == pytest.approx(2 * estimate_duration(one))


def test_yaml_errors_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntarget: [unclosed\n")
    with pytest.raises(SpecError) as caught:
        load_spec(bad)
    assert caught.value.field.startswith(f"{bad}:")


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / "nope.yaml")
    assert caught.value.field.endswith("nope.yaml")


def test_suite_errors_name_the_benchmark_index() -> None:
    data = {"suite": "s", "benchmarks": [BASE, spec_with(name="b", workload__properties={"fieldlength": 0})]}
    with pytest.raises(SpecError) as caught:
        parse_suite(data)
    assert caught.value.field == "benchmarks[1].workload.properties.fieldlength"


def test_suite_names_must_be_unique() -> None:
    with pytest.raises(SpecError, match="unique"):
        parse_suite({"suite": "s", "benchmarks": [BASE, BASE]})


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_validates(path: Path) -> None:
    suite = load_suite(path)
    assert suite.benchmarks
    for spec in suite.benchmarks:
        assert isinstance(spec, BenchmarkSpec)
        assert estimate_duration(spec) > 0
        if ".aws." in path.name:
            assert spec.target.provider in ("rds", "aurora", "elasticache", "memorydb", "ec2")
        else:
            assert spec.is_local


def test_each_seed_experiment_has_a_local_and_an_aws_example() -> None:
    names = [p.name for p in EXAMPLES.glob("exp*.yaml")]
    for n in range(1, 6):
        assert any(x.startswith(f"exp{n}-") and ".local." in x for x in names), n
        assert any(x.startswith(f"exp{n}-") and ".aws." in x for x in names), n


def test_quickstart_is_a_suite_of_redis_and_postgres() -> None:
    suite = load_suite(EXAMPLES / "quickstart.yaml")
    assert sorted(b.target.engine for b in suite.benchmarks) == ["postgres", "redis"]
    assert yaml.safe_load((EXAMPLES / "quickstart.yaml").read_text())["suite"] == "quickstart"


def _example_specs() -> list[Any]:
    return [
        pytest.param(spec, id=f"{path.name}:{spec.name}")
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for spec in load_suite(path).benchmarks
    ]


def _same_spec(a: BenchmarkSpec, b: BenchmarkSpec) -> None:
    assert b == a
    assert enabled_phases(b) == enabled_phases(a)
    assert [(c.cell_id, c.parameters, enabled_phases(c.spec)) for c in expand_matrix(b)] == [
        (c.cell_id, c.parameters, enabled_phases(c.spec)) for c in expand_matrix(a)
    ]
    assert estimate_duration(b) == estimate_duration(a)


@pytest.mark.parametrize("spec", _example_specs())
def test_every_example_round_trips_through_every_dump(spec: BenchmarkSpec) -> None:
    """The AWS workflow and the API carry the spec as model_dump(mode="json"); the stages as
    spec_dict. Each must re-validate to the same spec, phases included."""
    for data in (
        spec.model_dump(mode="json"),
        spec.model_dump(),
        yaml.safe_load(spec.model_dump_json()),
        spec_dict(spec),
    ):
        _same_spec(spec, parse_spec(data))
    for cell in expand_matrix(spec):
        _same_spec(cell.spec, parse_spec(cell.spec.model_dump(mode="json")))


def test_round_trip_keeps_a_workload_without_load_phase_valid() -> None:
    data = spec_with(
        workload={
            "name": "redis-bench",
            "properties": {"redisbench.tests": "get", "redisbench.requests": 100},
        }
    )
    spec = parse_spec(data)
    assert enabled_phases(spec) == ["run"]
    dumped = spec.model_dump(mode="json")
    assert "load" not in dumped["workload"]["phases"]
    assert enabled_phases(parse_spec(dumped)) == ["run"]


def test_round_trip_keeps_written_and_switched_off_phases() -> None:
    off = parse_spec(spec_with(workload__phases={"load": None}))
    assert enabled_phases(off) == ["run"]
    assert enabled_phases(parse_spec(off.model_dump(mode="json"))) == ["run"]

    written = parse_spec(spec_with(workload__phases={"load": {"threads": 2}}))
    again = parse_spec(written.model_dump(mode="json"))
    assert again.workload.phases.load is not None and again.workload.phases.load.threads == 2
    assert enabled_phases(again) == ["load", "run"]
    # written out, a load phase is still rejected by a workload that has none
    bad = spec_with(
        target={"provider": "local", "engine": "postgres"},
        workload={"name": "sql", "properties": {"sql.script": "SELECT 1"}, "phases": {"load": {}}},
    )
    with pytest.raises(SpecError, match="no load phase") as err:
        parse_spec(bad)
    assert err.value.field == "workload.phases.load"
    # redis-bench runs a written load phase (its own tests, e.g. SET to fill the keyspace before GET)
    ok = spec_with(
        workload={"name": "redis-bench", "phases": {"load": {"properties": {"redisbench.tests": "set"}}}}
    )
    assert enabled_phases(parse_spec(ok)) == ["load", "run"]


def test_default_phases_are_explicit_in_the_model() -> None:
    """An unwritten load / run is the workload's default; a written one (even ``load: null``) is not."""
    from benchwright.spec import Phases

    unwritten = Phases()
    assert unwritten.is_default("load") and unwritten.is_default("run")
    assert not unwritten.is_default("warmup")  # warmup has no default: absent means none
    written = Phases.model_validate({"load": None, "run": {"threads": 2}})
    assert not written.is_default("load") and not written.is_default("run")
    assert "load" not in unwritten.model_dump() and written.model_dump()["load"] is None
