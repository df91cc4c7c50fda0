"""The stack's side of ``target.monitoring`` (issue 27 part 5): the role RDS's Enhanced Monitoring
agent writes RDSOSMetrics as, passed by ProvisionTarget to RDS only, and the reads of CollectMetrics
held to the RDSOSMetrics log group and PI's RDS metrics."""

from __future__ import annotations

import json
from typing import Any

from tests.infra.test_stack import actions_of, resources, statements_of


def test_the_monitoring_role_is_rds_monitorings_and_only_rds_may_be_passed_it(stack: Any) -> None:
    doc = stack
    roles = {
        name: r
        for name, r in resources(doc, "AWS::IAM::Role").items()
        if name.startswith("ComputeRdsMonitoringRole")
    }
    ((logical, role),) = roles.items()
    trust = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "monitoring.rds.amazonaws.com"}]
    assert "service-role/AmazonRDSEnhancedMonitoringRole" in json.dumps(
        role["Properties"]["ManagedPolicyArns"]
    )
    passes = [s for s in statements_of(doc, "provision_target") if "iam:PassRole" in actions_of([s])]
    to_monitoring = [s for s in passes if logical in json.dumps(s["Resource"])]
    assert len(to_monitoring) == 1
    assert to_monitoring[0]["Condition"] == {
        "StringEquals": {"iam:PassedToService": "monitoring.rds.amazonaws.com"}
    }
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"].startswith("functions.provision_target")
    )  # fmt: skip
    assert logical in json.dumps(
        fn["Properties"]["Environment"]["Variables"]["BENCHWRIGHT_MONITORING_ROLE_ARN"]
    )


def test_collect_metrics_reads_only_the_rds_os_metrics_group_and_pi_metrics(stack: Any) -> None:
    doc = stack
    statements = statements_of(doc, "collect_metrics")
    logs = [s for s in statements if "logs:FilterLogEvents" in actions_of([s])]
    pi = [s for s in statements if "pi:GetResourceMetrics" in actions_of([s])]
    assert len(logs) == 1 and actions_of(logs) == {"logs:FilterLogEvents", "logs:GetLogEvents"}
    assert "log-group:RDSOSMetrics:*" in json.dumps(logs[0]["Resource"])
    assert len(pi) == 1 and ":metrics/rds/*" in json.dumps(pi[0]["Resource"])
