"""What every stage handler shares: powertools objects, event -> RunState, the stage call.

Step Functions' Catch puts ``{"Error", "Cause"}`` under ``caught`` (see the ASL); this is the one place
that turns it into the run state's ``error`` / ``error_type`` fields. Nothing here logs the event:
the state never holds secrets, but the rule is simpler to keep when nothing dumps whole payloads.
"""

from __future__ import annotations

import json
import math
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import ValidationError

from benchwright.providers.aws.bundle import aws_providers
from benchwright.providers.aws.common import Clients, target_ttl_hours
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.names import METRICS_NAMESPACE
from benchwright.providers.aws.run_session import RUN_SCOPED, run_scoped_clients
from benchwright.providers.base import Providers
from benchwright.spec.errors import from_validation
from benchwright.stages import FinishState, RunState, stage_function

logger = Logger(service="benchwright")
tracer = Tracer(service="benchwright")
metrics = Metrics(namespace=METRICS_NAMESPACE, service="benchwright")

CAUGHT_KEYS = ("caught", "teardown_caught")
_settings: AwsSettings | None = None
_clients: Clients | None = None
# Replacements for tests and offline dry runs: "probe" (readiness), "prices" (a PriceBook).
injected: dict[str, Any] = {}


def settings() -> AwsSettings:
    """Read once per cold start (validated; a bad variable fails the first invocation loudly)."""
    global _settings
    if _settings is None:
        _settings = AwsSettings.from_env()
    return _settings


def clients() -> Clients:
    """boto3 clients live as long as the Lambda container (creating them costs more than most calls)."""
    global _clients
    if _clients is None or _clients.settings is not settings():
        _clients = Clients(settings())
    return _clients


# The one stage that writes the time-series sink (its Lambda has the sink's IAM grants and VPC).
INGEST_STAGES = {"store_results"}
# The stages whose deletes and secret reads (Teardown, CheckOperations) or calls on their run's
# objects in the results bucket (the others) go through a session of their run-scoped role, tagged
# with the state's run (providers/aws/run_session.py): another run's resource or key named in the
# state is denied by IAM. SummarizeSuite and AbortTeardown finish runs with finish_run's.
RUN_SCOPED_STAGES = set(RUN_SCOPED)


def providers_for(state: FinishState, stage: str | None = None) -> Providers:
    config = settings()
    cells = getattr(state, "target_cells", 1)
    if cells > 1:  # a suite's shared target: its expires-at covers the whole group
        config = config.model_copy(update={"ttl_hours": target_ttl_hours(config, cells)})
    providers = aws_providers(
        state.spec,
        config,
        clients=run_scoped_clients(clients(), state.run_id, stage)
        if stage in RUN_SCOPED_STAGES
        else clients(),
        probe=injected.get("probe"),
        ingest=stage in INGEST_STAGES,
    )
    if "prices" in injected:
        providers.prices = injected["prices"]
    return providers


def caught_error(caught: dict[str, Any]) -> tuple[str, str]:
    """(error name, message) from a Catch's ``{"Error", "Cause"}``; Lambda causes are JSON."""
    name = str(caught.get("Error") or "Unknown")
    cause = caught.get("Cause") or ""
    try:
        message = str(json.loads(cause).get("errorMessage") or cause)
    except (ValueError, AttributeError):
        message = str(cause)
    return name, message[:2000]


def parse_state(event: dict[str, Any]) -> RunState:
    """The run state of the event (its spec typed here, once per invocation); a caught failure
    becomes ``status=failed`` with the error. A state that does not validate raises SpecError
    naming the field (``spec.target.instance_class``)."""
    event = dict(event)
    caught = {key: event.pop(key) for key in CAUGHT_KEYS if key in event}
    try:
        state = RunState.model_validate(event)
    except ValidationError as exc:
        raise from_validation(exc) from None
    for key in CAUGHT_KEYS:
        if key in caught:
            name, message = caught_error(caught[key])
            if key == "teardown_caught" and state.status == "failed":
                # the run had already failed: keep its first error, note the teardown's as a warning
                warning = f"teardown failed: {name}: {message}"
                state = state.model_copy(update={"warnings": [*state.warnings, warning]})
                continue
            state = state.model_copy(update={"status": "failed", "error": message, "error_type": name})
    return state


def run_stage(stage: str, event: dict[str, Any]) -> dict[str, Any]:
    """Parse, run one stage, count it, and hand back the JSON form of the next state."""
    state = parse_state(event)
    logger.append_keys(run_id=state.run_id, cell_id=state.cell_id, stage=stage)
    providers = providers_for(state, stage)
    new_state = stage_function(stage)(state, providers)
    for warning in new_state.warnings[len(state.warnings) :]:  # e.g. Slack down: reported, not fatal
        logger.warning(warning)
    metrics.add_dimension(name="stage", value=stage)
    metrics.add_metric(name="StageCompleted", unit=MetricUnit.Count, value=1)
    logger.info(
        "stage done",
        extra={
            "status": new_state.status,
            "target_status": new_state.target_status,
            "runner_status": new_state.runner_status,
            "notification": new_state.notification,
        },
    )
    return dump(new_state)


def dump(state: RunState) -> dict[str, Any]:
    """The JSON form; ``poll_seconds`` as a whole number because ASL Wait's SecondsPath wants one."""
    result: dict[str, Any] = state.model_dump(mode="json")
    result["poll_seconds"] = max(0, math.ceil(state.poll_seconds))
    return result
