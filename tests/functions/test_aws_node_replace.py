"""``node_replace`` on an EC2 YugabyteDB cluster against moto, step by step as CheckOperations takes them.

moto's network interfaces have addresses nothing listens on, so the probe query (the real
``postgres_rows``, over a real connection) is pointed at an address this test chooses per node: the
local PostgreSQL holding a table of ROWS rows, or a closed port while the "new node" does not answer
yet. The hosts it was asked for are recorded: the count before goes through node 1 (the endpoint), the
final one through the replacement's new address at YSQL's port.

moto's SSM runs nothing (every invocation "Success", empty output): SendCommand is patched to run the
lines through the rehearsal's yb-admin executor (rehearse/services/ssm.py) on a cluster state this
test owns, which scripts the load move's answers.
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
from benchwright.rehearse.services.ssm import patch_send_command
from benchwright.rehearse.yb_admin import Cluster, YbAdmin
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


@dataclass
class Yb:
    """The cluster state yb-admin reads and changes on node 1 (the only node this test gives one)."""

    cluster: Cluster
    node: str = ""


@pytest.fixture
def yb() -> Iterator[Yb]:
    """SendCommand runs yb-admin on node 1; the load move answers 40 % once, then 100 %."""
    found = Yb(Cluster(percents=[40.0]))
    events: list[str] = []
    mp = pytest.MonkeyPatch()
    patch_send_command(
        mp.setattr, YbAdmin(lambda i: found.cluster if i == found.node else None, events.append)
    )
    yield found
    mp.undo()


def _cluster(aws: Any, run_id: str, nodes: Nodes, yb: Yb | None = None) -> Any:
    t = target(aws, YUGABYTE, run_id)
    t.create()
    t.handle["operations"] = "node_replace"  # as provision_target sets it
    assert t.status() == "ready"
    ips = t.handle["ips"].split(",")
    nodes.ports.update({ip: PG_PORT for ip in ips})
    if yb is not None:
        yb.node = t.handle["instances"].split(",")[0]
    return t


def _instance(aws: Any, instance_id: str) -> dict[str, Any]:
    found = aws[1]("ec2").describe_instances(InstanceIds=[instance_id])["Reservations"]
    return dict(found[0]["Instances"][0])


def _serving(t: Any, nodes: Nodes, steps: int) -> dict[str, Any]:
    """``steps`` steps of node_replace, the replacement answering from its launch on."""
    progress, entry = t.operation_step("node_replace", {})
    nodes.ports[progress["new_ip"]] = PG_PORT
    for _ in range(steps - 1):
        assert entry is None
        progress, entry = t.operation_step("node_replace", progress)
    assert entry is None
    return progress


def _commands(aws: Any) -> list[dict[str, Any]]:
    return list(aws[1]("ssm").list_commands()["Commands"])


def test_node_replace_adds_a_node_at_a_new_address_blacklists_the_old_and_waits_for_the_load_move(
    aws: Any, nodes: Nodes, yb: Yb
) -> None:
    t = _cluster(aws, "nr-ok", nodes, yb)
    before = dict(t.handle)
    ids, ips, enis = (before[k].split(",") for k in ("instances", "ips", "enis"))

    progress, entry = t.operation_step("node_replace", {})
    assert entry is None and progress["phase"] == "launching" and progress["victim"] == ids[2]
    assert _instance(aws, ids[2])["State"]["Name"] == "running"  # the victim stays until the load moved
    assert nodes.asked == [(ips[0], 5433, "yugabyte", "yugabyte")]  # counted through the endpoint node
    allowed = datetime.fromisoformat(progress["deadline"]) - datetime.fromisoformat(progress["started_at"])
    assert allowed == timedelta(hours=2)  # not the stage's four hours of a restore
    new = _instance(aws, progress["replacement"])
    new_ip = new["PrivateIpAddress"]
    assert new["NetworkInterfaces"][0]["NetworkInterfaceId"] not in enis and new_ip not in ips
    assert new["Placement"]["AvailabilityZone"] == _instance(aws, ids[2])["Placement"]["AvailabilityZone"]
    tags = {x["Key"]: x["Value"] for x in new["Tags"]}
    assert tags[RUN_ID_TAG] == "nr-ok" and tags["Name"] == t.name
    user_data = base64.b64decode(
        aws[1]("ec2").describe_instance_attribute(InstanceId=new["InstanceId"], Attribute="userData")[
            "UserData"
        ]["Value"]
    ).decode()
    after = [ips[0], ips[1], new_ip]
    assert f"MASTERS={','.join(f'{ip}:7100' for ip in after)}" in user_data and "MASTER_START=''" in user_data
    assert f"MASTER_OTHERS={','.join(f'{ip}:7100' for ip in ips)}" in user_data  # the quorum it joins
    assert f"MASTER_LEAVING={ips[2]}" in user_data and f"NODE_IP={new_ip}" in user_data
    assert t.handle["instances"].split(",") == [ids[0], ids[1], new["InstanceId"]]
    assert t.handle["ips"].split(",") == after and t.handle["replaced"] == ids[2]
    assert t.handle["replaced_enis"] == enis[2]

    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "joining"  # moto: running at once
    nodes.ports[new_ip] = _closed_port()  # the new node does not answer yet
    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "joining" and _commands(aws) == []
    nodes.ports[new_ip] = PG_PORT
    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "blacklisting", progress
    assert nodes.asked[-1] == (new_ip, 5433, "yugabyte", "yugabyte")  # served through the NEW address
    assert yb.cluster.blacklist == [f"{ips[2]}:9100"]  # the OLD tserver, never the replacement
    (sent,) = _commands(aws)
    # moto lists every instance of the account under a command sent to one: node 1 is among them, and
    # the executor ran on it alone (the cluster heard one command)
    assert sent["DocumentName"] == "AWS-RunShellScript" and ids[0] in sent["InstanceIds"]
    assert len(yb.cluster.said) == 1
    masters = ",".join(f"{ip}:7100" for ip in [*after, ips[2]])
    assert (
        f"-master_addresses {masters} change_blacklist ADD {ips[2]}:9100" in sent["Parameters"]["commands"][1]
    )

    progress, entry = t.operation_step("node_replace", progress)  # blacklisted: the load move is asked
    assert entry is None and progress["phase"] == "moving" and progress["load_polls"] == 1, progress
    progress, entry = t.operation_step("node_replace", progress)  # 40 %: asked again
    assert entry is None and progress["phase"] == "moving" and progress["load_percent"] == 40.0
    assert progress["load_polls"] == 2 and "rereplicated_at" not in progress
    assert _instance(aws, ids[2])["State"]["Name"] == "running"
    progress, entry = t.operation_step("node_replace", progress)  # 100 %: the clock stops
    assert entry is None and progress["phase"] == "terminating" and progress["load_percent"] == 100.0
    assert _instance(aws, ids[2])["State"]["Name"] in {"shutting-down", "terminated"}
    progress, entry = t.operation_step("node_replace", progress)
    assert entry is None and progress["phase"] == "unblacklisting"
    progress, entry = t.operation_step("node_replace", progress)

    assert entry is not None and entry["ok"] is True, entry
    assert yb.cluster.said == [
        f"change_blacklist ADD {ips[2]}:9100",
        "get_load_move_completion",
        "get_load_move_completion",
        f"change_blacklist REMOVE {ips[2]}:9100",
    ]
    assert yb.cluster.blacklist == []
    steps = entry["steps"]
    clocked = ("launch_s", "ready_s", "blacklist_s", "rereplicate_s")
    assert set(steps) == {*clocked, "serving_s", "terminate_s"} and min(steps.values()) >= 0, steps
    assert abs(entry["seconds"] - sum(steps[k] for k in clocked)) < 0.01, entry  # the clock: to 100 %
    assert abs(steps["serving_s"] - steps["launch_s"] - steps["ready_s"]) < 0.01, steps
    assert steps["serving_s"] <= entry["seconds"]
    assert f"{ROWS:,} rows in the user tables, as before" in entry["detail"]
    assert f"node 3 of 3 ({ids[2]}, {ips[2]}" in entry["detail"] and f"at {new_ip}:5433" in entry["detail"]
    assert f"change_blacklist ADD {ips[2]}:9100; load move 100 % after 2 polls" in entry["detail"]
    assert ("AWS/EC2", {"InstanceId": ids[2]}) in t.metric_dimensions()  # the measured phase's series

    t.delete()
    assert _instance(aws, new["InstanceId"])["State"]["Name"] in {"shutting-down", "terminated"}
    kinds = {"ec2-instance", "ec2-network-interface", "network-interface"}
    assert [r for r in leftovers(aws[1], "nr-ok") if r.kind in kinds] == []


def test_a_failed_blacklist_fails_node_replace_naming_the_step(aws: Any, nodes: Nodes, yb: Yb) -> None:
    """yb-admin refuses (here: a node without the cluster's yb-admin): the operation fails saying
    which step, and teardown still removes the victim, the replacement and both interfaces."""
    from benchwright.providers.aws.targets.operations import OperationFailed

    t = _cluster(aws, "nr-refused", nodes, yb)
    yb.node = "i-nobody"  # node 1 has no yb-admin: every command fails
    progress = _serving(t, nodes, 3)  # launch, running, serving: the blacklist is sent
    assert progress["phase"] == "blacklisting"
    with pytest.raises(OperationFailed, match=r"node_replace: blacklist: yb-admin on i-\w+ ended Failed"):
        t.operation_step("node_replace", progress)
    t.delete()
    assert [r for r in leftovers(aws[1], "nr-refused") if r.kind.startswith("ec2")] == []


def test_a_load_move_that_never_reaches_100_times_out_naming_it(aws: Any, nodes: Nodes, yb: Yb) -> None:
    from tests.functions.test_aws_operations import at_the_deadline

    t = _cluster(aws, "nr-stuck", nodes, yb)
    yb.cluster.percents = [12.5] * 5
    progress = _serving(t, nodes, 6)  # launch, running, serving, blacklisted, 12.5 %, 12.5 %
    assert progress["phase"] == "moving" and progress["load_percent"] == 12.5

    entry = at_the_deadline(aws, t, "node_replace", progress)

    assert entry["ok"] is False and entry["seconds"] is None, entry
    assert "waiting for the load move (12.5 % at the last poll)" in entry["detail"], entry
    t.delete()


def test_teardown_terminates_a_replacement_whose_step_was_lost(aws: Any, nodes: Nodes) -> None:
    """The Lambda that launched the replacement died before its state was saved: teardown works from
    the handle as provisioned and still finds the replacement (by the run's tags)."""
    t = _cluster(aws, "nr-lost", nodes)
    provisioned = dict(t.handle)
    progress, _ = t.operation_step("node_replace", {})
    replacement = progress["replacement"]
    assert replacement not in provisioned["instances"] and progress["eni"] not in provisioned["enis"]

    target(aws, YUGABYTE, "nr-lost", provisioned).delete()

    assert _instance(aws, replacement)["State"]["Name"] in {"shutting-down", "terminated"}
    assert _instance(aws, progress["victim"])["State"]["Name"] in {"shutting-down", "terminated"}
    assert [r for r in leftovers(aws[1], "nr-lost") if r.kind.startswith("ec2")] == []
    left = aws[1]("ec2").describe_network_interfaces(
        Filters=[{"Name": f"tag:{RUN_ID_TAG}", "Values": ["nr-lost"]}]
    )["NetworkInterfaces"]
    assert left == []  # the replacement's new interface too


def test_a_replacement_that_counts_other_rows_fails_node_replace(aws: Any, nodes: Nodes, pg_url: str) -> None:
    import psycopg

    from benchwright.providers.aws.targets.operations import OperationFailed

    t = _cluster(aws, "nr-rows", nodes)
    progress: dict[str, Any] = {}
    for _ in range(2):  # launch, running
        progress, entry = t.operation_step("node_replace", progress)
        assert entry is None
    assert progress["phase"] == "joining"
    nodes.ports[progress["new_ip"]] = PG_PORT
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
    for _ in range(2):  # launch, running
        progress, entry = t.operation_step("node_replace", progress)
        assert entry is None
    assert progress["phase"] == "joining" and "last_probe_error" not in progress
    ip = progress["new_ip"]
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
