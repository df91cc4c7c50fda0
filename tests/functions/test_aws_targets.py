"""AWS targets behind the Target template method, against moto (and Stubber where moto is too kind)."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from benchwright.errors import ProvisioningFailed, RetryableProvisioningError
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.janitor import leftovers
from benchwright.providers.aws.names import EXPIRES_TAG, OWNER_TAG, RUN_ID_TAG
from benchwright.providers.aws.targets import TARGETS
from benchwright.spec import parse_target
from benchwright.spec.yugabytedb import YUGABYTEDB_BUILDS
from tests.aws_world import REGION


def target(
    aws: tuple[AwsSettings, Clients],
    settings: dict[str, Any],
    run_id: str,
    handle: dict[str, str] | None = None,
    probe: Any = None,
) -> Any:
    config, clients = aws
    cls = TARGETS[settings["provider"]]
    return cls(
        parse_target(settings),
        run_id,
        handle,
        clients=clients,
        config=config,
        probe=probe or (lambda h, p: True),
    )


RDS = {
    "provider": "rds",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.m6i.large",
    "storage": {"type": "io1", "size_gb": 100, "iops": 3000},
    "availability_zone": f"{REGION}b",
    "settings": {"max_connections": 500, "shared_buffers": "4GB"},
}


def test_rds_instance_is_created_tagged_with_its_settings_and_a_managed_secret(aws: Any) -> None:
    t = target(aws, RDS, "rds-1")
    handle = t.create()

    db = aws[1]("rds").describe_db_instances(DBInstanceIdentifier=handle["name"])["DBInstances"][0]
    assert (db["StorageType"], db["AllocatedStorage"], db["Iops"]) == ("io1", 100, 3000)
    assert db["AvailabilityZone"] == f"{REGION}b" and db["MultiAZ"] is False
    assert db["DBParameterGroups"][0]["DBParameterGroupName"] == handle["parameter_group"]
    tags = {x["Key"]: x["Value"] for x in db["TagList"]}
    assert tags[RUN_ID_TAG] == "rds-1" and tags[OWNER_TAG] == "tests" and EXPIRES_TAG in tags
    params = aws[1]("rds").describe_db_parameters(
        DBParameterGroupName=handle["parameter_group"], Source="user"
    )
    assert {p["ParameterName"]: p["ParameterValue"] for p in params["Parameters"]}["max_connections"] == "500"
    assert t.status() == "ready"
    assert t.credentials().secret_arn and t.credentials().password is None
    assert t.connection_properties() == {
        "postgres.url": f"postgresql://bench@{t.handle['host']}:{t.handle['port']}/bench"
    }


def test_rds_ready_needs_a_connection_not_just_available(aws: Any) -> None:
    answers = iter([False, True])
    t = target(aws, RDS, "rds-2", probe=lambda h, p: next(answers))
    t.create()
    assert t.status() == "creating"
    assert t.status() == "ready"


def test_rds_status_follows_the_api_while_it_is_creating(aws: Any) -> None:
    """moto makes instances available at once; the real API goes creating -> backing-up -> available."""
    t = target(aws, RDS, "rds-3")
    t.create()
    rds = aws[1]("rds")
    endpoint = {"Address": "db.example.internal", "Port": 5432}
    with Stubber(rds) as stub:
        for status in ("creating", "backing-up", "available", "failed"):
            stub.add_response(
                "describe_db_instances",
                {
                    "DBInstances": [
                        {"DBInstanceIdentifier": t.name, "DBInstanceStatus": status, "Endpoint": endpoint}
                    ]
                },
                {"DBInstanceIdentifier": ANY},
            )
        assert [t.status() for _ in range(4)] == ["creating", "creating", "ready", "failed"]


def test_rds_throttling_is_retryable_and_names_the_instance(aws: Any) -> None:
    t = target(aws, RDS, "rds-4")
    with Stubber(aws[1]("rds")) as stub:
        stub.add_client_error("create_db_parameter_group", "Throttling", "Rate exceeded")
        with pytest.raises(RetryableProvisioningError, match="Throttling"):
            t.create()


def test_rds_delete_is_idempotent_and_leaves_nothing_tagged(aws: Any) -> None:
    t = target(aws, RDS, "rds-5")
    t.create()
    t.delete()
    t.delete()  # already gone: success
    assert leftovers(aws[1], "rds-5") == []


def test_aurora_serverless_cluster_with_instances(aws: Any) -> None:
    settings = {
        "provider": "aurora",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.serverless",
        "instances": 2,
        "serverless_v2": {"min_acu": 0.5, "max_acu": 8},
    }
    t = target(aws, settings, "aurora-1")
    t.create()
    rds = aws[1]("rds")
    cluster = rds.describe_db_clusters(DBClusterIdentifier=t.name)["DBClusters"][0]
    assert cluster["ServerlessV2ScalingConfiguration"] == {"MinCapacity": 0.5, "MaxCapacity": 8.0}
    members = rds.describe_db_instances(Filters=[{"Name": "db-cluster-id", "Values": [t.name]}])[
        "DBInstances"
    ]
    assert sorted(i["DBInstanceClass"] for i in members) == ["db.serverless", "db.serverless"]
    assert t.status() in ("creating", "ready")
    t.delete()
    assert leftovers(aws[1], "aurora-1") == []


def test_elasticache_replication_group_is_pinned_to_the_az(aws: Any) -> None:
    settings = {
        "provider": "elasticache",
        "engine": "redis",
        "engine_version": "7.1",
        "node_type": "cache.r7g.large",
        "replicas": 1,
        "availability_zone": f"{REGION}c",
        "tls": True,
    }
    t = target(aws, settings, "cache-1")
    t.create()
    group = aws[1]("elasticache").describe_replication_groups(ReplicationGroupId=t.name)["ReplicationGroups"][
        0
    ]
    assert group["ReplicationGroupId"] == t.name
    assert t.status() in ("creating", "ready")
    t.delete()
    t.delete()
    assert leftovers(aws[1], "cache-1") == []


def test_memorydb_cluster_is_listed_per_service_and_deleted(aws: Any) -> None:
    settings = {
        "provider": "memorydb",
        "engine": "redis",
        "engine_version": "7.1",
        "node_type": "db.r7g.large",
        "shards": 1,
        "replicas_per_shard": 1,
    }
    t = target(aws, settings, "mdb-1")
    t.create()
    assert [r.kind for r in leftovers(aws[1], "mdb-1")] == ["memorydb-cluster"]
    t.delete()
    assert leftovers(aws[1], "mdb-1") == []


def test_yugabytedb_three_nodes_one_per_az_know_each_other_before_boot(aws: Any) -> None:
    settings = {
        "provider": "ec2",
        "engine": "postgres",
        "template": "yugabytedb-3node",
        "instance_type": "m6i.4xlarge",
        "nodes": 3,
        "replication_factor": 3,
        "volume": {"type": "gp3", "size_gb": 200},
        "settings": {"ysql_max_connections": 400},
    }
    t = target(aws, settings, "yb-1")
    handle = t.create()
    ec2 = aws[1]("ec2")
    ids = handle["instances"].split(",")
    reservations = ec2.describe_instances(InstanceIds=ids)["Reservations"]
    azs = sorted(i["Placement"]["AvailabilityZone"] for r in reservations for i in r["Instances"])
    assert azs == [f"{REGION}a", f"{REGION}b", f"{REGION}c"]
    user_data = base64.b64decode(
        ec2.describe_instance_attribute(InstanceId=ids[0], Attribute="userData")["UserData"]["Value"]
    ).decode()
    masters = ",".join(f"{ip}:7100" for ip in handle["ips"].split(","))
    assert f"MASTERS={masters}" in user_data and "REPLICATION_FACTOR=3" in user_data
    assert "TSERVER_FLAGS=(--ysql_max_connections=400)" in user_data
    assert t.status() == "ready"
    assert t.connection_properties()["postgres.url"].count(":5433") == 3
    t.delete()
    assert [r.kind for r in leftovers(aws[1], "yb-1") if r.kind == "ec2-instance"] == []


def test_redis_protocol_server_builds_ardb_from_source(aws: Any) -> None:
    settings = {
        "provider": "ec2",
        "engine": "redis",
        "template": "redis-protocol",
        "instance_type": "t2.micro",
        "server": "ardb",
        "volume": {"type": "gp2", "size_gb": 100},
    }
    t = target(aws, settings, "ardb-1")
    handle = t.create()
    ec2 = aws[1]("ec2")
    user_data = base64.b64decode(
        ec2.describe_instance_attribute(InstanceId=handle["instances"], Attribute="userData")["UserData"][
            "Value"
        ]
    ).decode()
    assert "storage_engine=lmdb make" in user_data and "ardb-server /opt/ardb/ardb.conf" in user_data
    assert t.connection_properties()["redis.port"] == "6379"
    t.delete()


def test_ec2_target_without_enough_azs_fails_before_creating(aws: Any) -> None:
    config, clients = aws
    narrow = config.model_copy(update={"subnet_ids": config.subnet_ids[:1]})
    settings = {
        "provider": "ec2",
        "engine": "postgres",
        "template": "yugabytedb-3node",
        "instance_type": "m6i.large",
    }
    t = TARGETS["ec2"](
        parse_target(settings), "yb-2", None, clients=clients, config=narrow, probe=lambda h, p: True
    )
    with pytest.raises(ProvisioningFailed, match="needs 3 AZs"):
        t.create()
    assert leftovers(clients, "yb-2") == []


def test_endpoint_creates_and_deletes_nothing(aws: Any) -> None:
    settings = {
        "provider": "endpoint",
        "engine": "postgres",
        "hosts": ["db1:5432", "db2:5432"],
        "user": "app",
        "database": "shop",
    }
    t = target(aws, settings, "ep-1")
    t.create()
    assert t.status() == "ready"
    assert t.connection_properties() == {"postgres.url": "postgresql://app@db1:5432,db2:5432/shop"}
    t.delete()


@contextmanager
def run_instances_requests(clients: Clients) -> Iterator[list[dict[str, Any]]]:
    """The RunInstances requests as botocore puts them on the wire (EC2's query form), while moto
    serves them: moto keeps neither ``Iops`` nor ``Throughput`` of a block device, so the request
    is where they can be seen."""
    sent: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        sent.append(dict(params["body"]))

    events = clients("ec2").meta.events
    events.register("before-call.ec2.RunInstances", capture, unique_id="bw-run-instances-requests")
    try:
        yield sent
    finally:
        events.unregister("before-call.ec2.RunInstances", unique_id="bw-run-instances-requests")


def _ebs(body: dict[str, Any]) -> dict[str, str]:
    prefix = "BlockDeviceMapping.1.Ebs."
    return {k.removeprefix(prefix): str(v) for k, v in body.items() if k.startswith(prefix)}


@pytest.mark.parametrize(
    ("volume", "ebs"),
    [
        (
            {"type": "gp3", "size_gb": 200, "iops": 4000, "throughput_mbps": 500},
            {"Iops": "4000", "Throughput": "500"},
        ),
        ({"type": "gp3", "size_gb": 200, "throughput_mbps": 250}, {"Throughput": "250"}),
        ({"type": "gp2", "size_gb": 100}, {}),
    ],
    ids=["gp3-iops-throughput", "gp3-throughput", "gp2"],
)
def test_an_ec2_target_volume_is_requested_with_its_iops_and_throughput(
    aws: Any, volume: dict[str, Any], ebs: dict[str, str]
) -> None:
    settings = {
        "provider": "ec2",
        "engine": "redis",
        "template": "redis-protocol",
        "instance_type": "m6i.large",
        "volume": volume,
    }
    run_id = f"vol-{volume['type']}-{volume.get('throughput_mbps', 0)}"
    t = target(aws, settings, run_id)
    with run_instances_requests(aws[1]) as sent:
        handle = t.create()
    (body,) = sent
    assert body["BlockDeviceMapping.1.DeviceName"] == "/dev/sdf"
    size = {"VolumeSize": str(volume["size_gb"]), "VolumeType": volume["type"], "DeleteOnTermination": "true"}
    assert _ebs(body) == size | ebs
    # and the instance really got that volume (moto keeps its type and size)
    attached = aws[1]("ec2").describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [handle["instances"]]}]
    )["Volumes"]
    sdf = [v for v in attached if v["Attachments"][0]["Device"] == "/dev/sdf"]
    assert [(v["VolumeType"], v["Size"]) for v in sdf] == [(volume["type"], volume["size_gb"])]
    t.delete()


def test_provisioned_iops_volumes_carry_their_iops() -> None:
    """moto drops Iops from run_instances' block devices and then refuses an io1 volume without
    them, so io1 is checked on the request the target builds."""
    settings = {
        "provider": "ec2",
        "engine": "redis",
        "template": "redis-protocol",
        "instance_type": "m6i.large",
        "volume": {"type": "io1", "size_gb": 120, "iops": 6000},  # io1: at most 50 IOPS per GB
    }
    t = TARGETS["ec2"](parse_target(settings), "x", None, clients=None, config=AwsSettings())
    assert t._block_devices()[0]["Ebs"] == {
        "VolumeSize": 120,
        "VolumeType": "io1",
        "DeleteOnTermination": True,
        "Iops": 6000,
    }


@pytest.mark.parametrize("version", sorted(YUGABYTEDB_BUILDS))
def test_every_listed_yugabytedb_version_renders_its_own_download(aws: Any, version: str) -> None:
    """The template's URL is the release's real file name: version and that version's build."""
    settings = {"provider": "ec2", "engine": "postgres", "template": "yugabytedb-3node",
                "instance_type": "m6i.large", "version": version}  # fmt: skip
    t = target(aws, settings, f"yb-v-{version}", handle={"ips": "10.0.1.10,10.0.2.10,10.0.3.10"})
    script = t.node_user_data(0)
    build = YUGABYTEDB_BUILDS[version]
    values = {k: shlex.split(v)[0] for k, _, v in (line.partition("=") for line in script.splitlines())
              if k in ("YB_VERSION", "YB_BUILD")}  # fmt: skip
    assert values == {"YB_VERSION": version, "YB_BUILD": build}  # shell-quoted data
    assert "downloads.yugabyte.com/releases/${YB_VERSION}/yugabyte-${YB_VERSION}-${YB_BUILD}-linux" in script
    assert "$yb_" not in script  # every placeholder filled


def test_an_unknown_yugabytedb_version_is_refused_naming_the_field_and_the_known_ones() -> None:
    from benchwright.errors import SpecError
    from benchwright.spec import parse_spec

    spec = {"name": "yb", "target": {"provider": "ec2", "engine": "postgres", "template": "yugabytedb-3node",
                                     "instance_type": "m6i.large", "version": "2024.2.3.1"},
            "runner": {"platform": "fargate"}, "workload": {"name": "ycsb"}}  # fmt: skip
    with pytest.raises(SpecError) as info:
        parse_spec(spec)
    assert info.value.field.startswith("target") and "version" in str(info.value)
    assert "2024.2.3.1" in str(info.value) and "2024.2.0.0" in str(info.value)
