"""Names the AWS code, the Lambda functions and the CDK stack must agree on: resource tags, the
resource name prefix and CloudWatch metrics.

One definition each, imported by ``providers/aws``, ``functions/`` and ``infra/`` alike: an IAM
condition on a tag key the code never writes, or an alarm on a metric nobody publishes, fails
silently on AWS, so nothing here is spelled twice. This module imports nothing.
"""

from __future__ import annotations

from typing import Final

# Tags on every resource a run creates (providers/aws/common.lifecycle_tags): teardown, the janitor
# and the least-privilege IAM conditions find resources by them.
RUN_ID_TAG: Final = "benchwright:run-id"
OWNER_TAG: Final = "benchwright:owner"
EXPIRES_TAG: Final = "benchwright:expires-at"
# The deployment (stage) a resource belongs to: the stage's AWS Budget filters on it, so every
# resource a run creates carries it (the stack's own resources get it from CDK's stack tags).
STAGE_TAG: Final = "benchwright:stage"
# On the stack's own resources only (infra/stack.py).
MANAGED_TAG: Final = "benchwright:managed"
# On a runner (ECS task or EC2 instance): a retried launch finds the runner of the first attempt by it,
# even where the ClientToken's own idempotency does not reach (another API endpoint, a stand-in).
LAUNCH_TOKEN_TAG: Final = "benchwright:launch-token"

# A suite execution may run this many times the stage's max_run_hours (the Suite state machine's
# timeout); a target shared by a suite's cells must outlive that many cells (common.target_ttl_hours).
SUITE_TIMEOUT_RUNS: Final = 6

# Every DB instance / cluster / cache a run creates is named with this prefix (``resource_name``): the
# stack's IAM lets runners read only the RDS-managed secrets of databases so named.
RESOURCE_PREFIX: Final = "bw-"

METRICS_NAMESPACE: Final = "Benchwright"
METRIC_LEAKED: Final = "LeakedResources"  # emitted by the janitor: resources found past expires-at
METRIC_RUN_COST: Final = "RunCostUSD"  # emitted by the Price stage: estimated cost of one run
