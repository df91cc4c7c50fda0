"""``node_replace`` on an EC2 YugabyteDB cluster against moto, step by step as CheckOperations takes them.

moto's network interfaces have addresses nothing listens on, so the probe query (the real
``postgres_rows``, over a real connection) is pointed at an address this test chooses per node: the
local PostgreSQL holding a table of ROWS rows, or a closed port while the "new node" does not answer
yet. The hosts it was asked for are recorded: the count before goes through node 1 (the endpoint), the
final one through the replaced node's address at YSQL's port.
"""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from benchwright.providers.aws.janitor import leftovers
from benchwright.providers.aws.names import RUN_ID_TAG
from tests.conftest import PASSWORD, PG_PORT, USER
from tests.functions.test_aws_targets import target

ROWS = 123
YUGABYTE = {
    "provider": "ec2",
    "engine": "postgres",
    "template": "yugabytedb-3node",
    "instance_type": "m6i.large",
    "volume": {"type": "gp3", "size_gb": 50},
}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Nodes:
    """Where the probe of each node address really connects, and what it was asked for."""

    database: str
    ports: dict[str, int] = field(default_factory=dict)  # node address -> local port
    asked: list[tuple[str, int, str, str]] = field(default_factory=list)  # host, port, user, database


@pytest.fixture
def nodes(pg_url: str) -> Iterator[Nodes]:
    import psycopg

    from benchwright.providers.aws import probe

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS usertable (k int primary key)")
        conn.execute("TRUNCATE usertable")
        conn.execute("INSERT INTO usertable SELECT generate_series(1, %s)", (ROWS,))
    found = Nodes(database=pg_url.rsplit("/", 1)[-1])
    real = probe.postgres_rows

    def rows(host: str, port: int, user: str, password: str, database: str, timeout_s: float = 5.0) -> int:
        found.asked.append((host, port, user, database))
        local = found.ports.get(host, _closed_port())
        return real("127.0.0.1", local, USER, PASSWORD, found.database, 2.0)

    mp = pytest.MonkeyPatch()
    mp.setattr(probe, "postgres_rows", rows)
    yield found
    mp.undo()


def _cluster(aws: Any, run_id: str, nodes: Nodes) -> Any:
    t = target(aws, YUGABYTE, run_id)
    t.create()
    t.handle["operations"] = "node_replace"  # as provision_target sets it
    assert t.status() == "ready"
    ips = t.handle["ips"].split(",")
    nodes.ports.update({ip: PG_PORT for ip in ips})
    return t


def _instance(aws: Any, instance_id: str) -> dict[str, Any]:
    found = aws[1]("ec2").describe_instances(InstanceIds=[instance_id])["Reservations"]
    return dict(found[0]["Instances"][0])


def test_node_replace_terminates_the_last_node_and_probes_through_its_replacement(
    aws: Any, nodes: Nodes
) -> None:
    t = _cluster(aws, "nr-ok", nodes)
    before = dict(t.handle)
    ids, ips, enis = (before[k].split(",") for k in ("instances", "ips", "enis"))

    progress, entry = t.operation_step("node_replace", {})
    assert entry is None and progress["phase"] == "terminating" and progress["victim"] == ids[2]
    assert _instance(aws, ids[2])["State"]["Name"] in {"shutting-down", "terminated"}
    assert nodes.asked == [(ips[0], 5433, "yugabyte", "yugabyte")]  # counted through the endpoint node
    allowed = datetime.fromisoformat(progress["deadline"]) - datetime.fromisoformat(progress["started_at"])
    assert allowed == timedelta(hours=1)  # not the stage's four hours of a restore

    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "launching"
    new = _instance(aws, progress["replacement"])
    assert new["NetworkInterfaces"][0]["NetworkInterfaceId"] == enis[2]
    assert new["PrivateIpAddress"] == ips[2]
    assert new["Placement"]["AvailabilityZone"] == _instance(aws, ids[2])["Placement"]["AvailabilityZone"]
    tags = {x["Key"]: x["Value"] for x in new["Tags"]}
    assert tags[RUN_ID_TAG] == "nr-ok" and tags["Name"] == t.name
    user_data = base64.b64decode(
        aws[1]("ec2").describe_instance_attribute(InstanceId=new["InstanceId"], Attribute="userData")[
            "UserData"
        ]["Value"]
    ).decode()
    masters = ",".join(f"{ip}:7100" for ip in ips)
    assert f"MASTERS={masters}" in user_data and "MASTER_START=''" in user_data
    others = f"{ips[0]}:7100,{ips[1]}:7100"
    assert f"MASTER_OTHERS={others}" in user_data and f"NODE_IP={ips[2]}" in user_data
    assert 'change_master_config "$2" "$NODE_IP" 7100' in user_data
    assert 'admin "$MASTER_OTHERS" REMOVE_SERVER' in user_data and 'admin "$MASTERS" ADD_SERVER' in user_data
    assert t.handle["instances"].split(",") == [ids[0], ids[1], new["InstanceId"]]
    assert t.handle["replaced"] == ids[2]

    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "joining"  # moto: running at once
    nodes.ports[ips[2]] = _closed_port()  # the new node does not answer yet
    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "joining"
    nodes.ports[ips[2]] = PG_PORT
    progress, entry = t.operation_step("node_replace", progress)

    assert entry is not None and entry["ok"] is True, entry
    steps = entry["steps"]
    assert set(steps) == {"terminate_s", "launch_s", "ready_s"} and min(steps.values()) >= 0
    assert abs(entry["seconds"] - sum(steps.values())) < 0.01, entry  # the steps split the total
    assert f"{ROWS:,} rows in the user tables, as before" in entry["detail"]
    assert f"node 3 of 3, {ips[2]}" in entry["detail"] and f"at {ips[2]}:5433" in entry["detail"]
    assert nodes.asked[-1] == (ips[2], 5433, "yugabyte", "yugabyte")
    assert ("AWS/EC2", {"InstanceId": ids[2]}) in t.metric_dimensions()  # the measured phase's series

    t.delete()
    assert _instance(aws, new["InstanceId"])["State"]["Name"] in {"shutting-down", "terminated"}
    assert [r for r in leftovers(aws[1], "nr-ok") if r.kind == "ec2-instance"] == []


def test_teardown_terminates_a_replacement_whose_step_was_lost(aws: Any, nodes: Nodes) -> None:
    """The Lambda that launched the replacement died before its state was saved: teardown works from
    the handle as provisioned and still finds the replacement (by the run's tags)."""
    t = _cluster(aws, "nr-lost", nodes)
    provisioned = dict(t.handle)
    progress, _ = t.operation_step("node_replace", {})
    progress, _ = t.operation_step("node_replace", progress)
    replacement = progress["replacement"]
    assert replacement not in provisioned["instances"]

    target(aws, YUGABYTE, "nr-lost", provisioned).delete()

    assert _instance(aws, replacement)["State"]["Name"] in {"shutting-down", "terminated"}
    assert [r for r in leftovers(aws[1], "nr-lost") if r.kind == "ec2-instance"] == []


def test_a_replacement_that_counts_other_rows_fails_node_replace(aws: Any, nodes: Nodes, pg_url: str) -> None:
    import psycopg

    from benchwright.providers.aws.targets.operations import OperationFailed

    t = _cluster(aws, "nr-rows", nodes)
    progress: dict[str, Any] = {}
    for _ in range(3):  # terminate, launch, running
        progress, entry = t.operation_step("node_replace", progress)
        assert entry is None
    assert progress["phase"] == "joining"
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the cluster lost a row with the node
        conn.execute("DELETE FROM usertable WHERE k = 1")
    with pytest.raises(OperationFailed, match=f"{ROWS - 1:,} rows, {ROWS:,} before"):
        t.operation_step("node_replace", progress)
    t.delete()
    assert [r for r in leftovers(aws[1], "nr-rows") if r.kind == "ec2-instance"] == []


def test_a_replacement_that_never_answers_times_out_naming_the_refused_connection(
    aws: Any, nodes: Nodes
) -> None:
    """The new node never serves YSQL: every poll's refused probe is tolerated, and at the deadline
    node_replace fails saying why and where, not only that it took too long."""
    from tests.functions.test_aws_operations import at_the_deadline

    t = _cluster(aws, "nr-silent", nodes)
    progress: dict[str, Any] = {}
    for _ in range(3):  # terminate, launch, running
        progress, entry = t.operation_step("node_replace", progress)
        assert entry is None
    assert progress["phase"] == "joining" and "last_probe_error" not in progress
    ip = progress["ip"]
    nodes.ports[ip] = _closed_port()
    for _ in range(2):
        progress, entry = t.operation_step("node_replace", progress)
        assert entry is None and progress["phase"] == "joining"
    said = progress["last_probe_error"]
    assert said.startswith("OperationalError: ") and said.endswith(f"({ip}:5433)"), said
    assert "Connection refused" in said and "\n" not in said, said

    entry = at_the_deadline(aws, t, "node_replace", progress)

    assert entry["ok"] is False, entry
    assert "node_replace did not finish by its deadline" in entry["detail"], entry
    assert f"; last probe error: {said}" in entry["detail"], entry
    t.delete()
    assert [r for r in leftovers(aws[1], "nr-silent") if r.kind == "ec2-instance"] == []
