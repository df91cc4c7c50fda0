"""Events on AWS targets: each action is the service's own API call, against moto where it has the
operation and botocore's Stubber (which checks every request against the service's API model) where
moto has none (ElastiCache TestFailover / RebootCacheCluster, MemoryDB FailoverShard)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber

from benchwright.errors import CapabilityError, SpecError
from benchwright.spec import parse_spec
from tests.aws_world import REGION
from tests.functions.test_aws_targets import RDS, target


def test_rds_failover_reboot_and_scale(aws: Any) -> None:
    t = target(aws, {**RDS, "multi_az": True, "availability_zone": None}, "ev-rds")
    handle = t.create()
    rds = aws[1]("rds")
    assert "ForceFailover" in t.trigger("failover")
    assert t.trigger("reboot") == f"RebootDBInstance {handle['name']}"
    assert "db.r6i.2xlarge" in t.trigger("scale", {"instance_class": "db.r6i.2xlarge"})
    db = rds.describe_db_instances(DBInstanceIdentifier=handle["name"])["DBInstances"][0]
    assert db["DBInstanceClass"] == "db.r6i.2xlarge"  # applied immediately
    t.delete()


def test_aurora_failover_moves_the_writer_and_scale_touches_every_instance(aws: Any) -> None:
    spec = {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
            "instance_class": "db.r6g.large", "instances": 2}  # fmt: skip
    t = target(aws, spec, "ev-aurora")
    handle = t.create()
    rds = aws[1]("rds")

    def writer() -> str:
        members = rds.describe_db_clusters(DBClusterIdentifier=handle["name"])["DBClusters"][0][
            "DBClusterMembers"
        ]
        return next(m["DBInstanceIdentifier"] for m in members if m["IsClusterWriter"])

    before = writer()
    assert t.trigger("failover") == f"FailoverDBCluster {handle['name']}"
    assert writer() != before  # moto promotes the replica, as Aurora does
    said = t.trigger("scale", {"instance_class": "db.r6g.xlarge"})
    assert said.count("ModifyDBInstance") == 2
    classes = {d["DBInstanceClass"] for d in rds.describe_db_instances()["DBInstances"]
               if d["DBInstanceIdentifier"].startswith(handle["name"])}  # fmt: skip
    assert classes == {"db.r6g.xlarge"}
    t.delete()


def test_elasticache_and_memorydb_calls_match_the_api_model(aws: Any) -> None:
    cache = target(aws, {"provider": "elasticache", "engine": "redis", "engine_version": "7.1",
                         "node_type": "cache.r7g.large", "replicas": 1, "availability_zone": f"{REGION}a"},
                   "ev-cache", handle={"name": "bw-ev-cache"})  # fmt: skip
    client = aws[1]("elasticache")
    with Stubber(client) as stub:
        stub.add_response("test_failover", {}, {"ReplicationGroupId": "bw-ev-cache", "NodeGroupId": "0001"})
        stub.add_response(
            "reboot_cache_cluster",
            {},
            {"CacheClusterId": "bw-ev-cache-001", "CacheNodeIdsToReboot": ["0001"]},
        )
        stub.add_response(
            "modify_replication_group",
            {},
            {
                "ReplicationGroupId": "bw-ev-cache",
                "CacheNodeType": "cache.r7g.xlarge",
                "ApplyImmediately": True,
            },
        )
        assert "TestFailover" in cache.trigger("failover")
        assert "RebootCacheCluster" in cache.trigger("reboot")
        assert "cache.r7g.xlarge" in cache.trigger("scale", {"node_type": "cache.r7g.xlarge"})
        stub.assert_no_pending_responses()
    mem = target(aws, {"provider": "memorydb", "engine": "redis", "engine_version": "7.1",
                       "node_type": "db.r7g.large"}, "ev-mem", handle={"name": "bw-ev-mem"})  # fmt: skip
    with Stubber(aws[1]("memorydb")) as stub:
        stub.add_response("failover_shard", {}, {"ClusterName": "bw-ev-mem", "ShardName": "0001"})
        assert "FailoverShard" in mem.trigger("failover")
        stub.assert_no_pending_responses()
    with pytest.raises(CapabilityError):
        mem.trigger("reboot")


def test_an_ec2_reboot_reboots_the_targets_instances_and_nothing_else(aws: Any) -> None:
    """EC2's one event, through the call its kind names (providers/aws/targets/kinds/ec2/kind.py)."""
    ec2 = aws[1]("ec2")
    image = aws[0].runner_ami
    ids = [i["InstanceId"] for i in ec2.run_instances(ImageId=image, MinCount=2, MaxCount=2)["Instances"]]
    section = {
        "provider": "ec2",
        "engine": "redis",
        "template": "redis-protocol",
        "instance_type": "m6i.large",
    }
    assert target(aws, section, "ev-ec2", handle={"instances": ",".join(ids)}).trigger("reboot") == (
        f"RebootInstances {', '.join(ids)}"
    )
    with pytest.raises(CapabilityError, match="no instances to reboot yet"):
        target(aws, section, "ev-ec2-none", handle={"name": "x"}).trigger("reboot")
    with pytest.raises(CapabilityError, match="cannot failover"):
        target(aws, section, "ev-ec2-fo", handle={"instances": ids[0]}).trigger("failover")


def _cloud(target_section: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "ev", "target": target_section, "runner": {"platform": "fargate"},
            "workload": {"name": "ycsb", "phases": {"run": {"duration_s": 60}}}, "events": events}  # fmt: skip


def test_a_failover_without_a_standby_is_refused_naming_the_field() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(_cloud({**RDS, "availability_zone": None}, [{"at_s": 10, "action": "failover"}]))
    assert err.value.field == "events[0].action" and "multi_az" in err.value.detail
    with pytest.raises(SpecError) as err:
        parse_spec(_cloud(RDS, [{"at_s": 10, "action": "scale", "to": {"node_type": "cache.r7g.large"}}]))
    assert err.value.field == "events[0].to" and "instance_class" in err.value.detail
    # a valid event is accepted: CheckRunner issues it (tests/rehearse/test_rehearse_events.py)
    spec = parse_spec(
        _cloud({**RDS, "multi_az": True, "availability_zone": None}, [{"at_s": 10, "action": "failover"}])
    )
    assert [(e.at_s, e.action) for e in spec.events] == [(10.0, "failover")]
