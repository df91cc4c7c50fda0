"""What the API does against AWS: Step Functions executions (one per run, named by the run id) and
the results bucket (record.json written by the workflow, report.html, presigned links).

Clients are created lazily (never at import) from the environment the stack sets, so tests build a
backend under moto and the Lambda reuses one per container.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

RECORD_KEY = "runs/{run_id}/record.json"
REPORT_KEY = "runs/{run_id}/report.html"
OWNER_KEY = "runs/{run_id}/owner.json"  # the IAM identity that submitted the run (written at submit)


# The Fail states an invalid run ends in (statemachines/*.asl.json): the execution FAILED, the API says
# INVALID: the run finished and its results are stored, but a cell is invalid (benchwright.outcome).
INVALID_ERRORS = ("RunInvalid", "SuiteInvalid")


class RunNotFound(Exception):
    """No execution with that run id in either state machine."""


def api_status(execution: dict[str, Any]) -> str:
    """The run's status as the API gives it: Step Functions' own, except INVALID for an execution that
    ended in RunInvalid / SuiteInvalid (its ``error``, from DescribeExecution)."""
    status = str(execution["status"])
    return "INVALID" if status == "FAILED" and execution.get("error") in INVALID_ERRORS else status


def latest_run_states(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """From history events: the newest run state of each cell (a suite's inline Map
    runs several cells in one execution), so each cell's Teardown gets its own handles. A suite's
    target group keeps the state that provisions its target under ``target`` (its Tasks read and
    write ``$.target``): that one is found too, so an abort while a group provisions tears it down."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    # newest first by event id, whatever order the caller fetched them in (moto ignores reverseOrder)
    for event in sorted(events, key=lambda e: int(e.get("id", 0)), reverse=True):
        details = event.get("stateExitedEventDetails") or {}
        try:
            output = json.loads(details.get("output") or "null")
        except ValueError:
            continue
        if not isinstance(output, dict):
            continue
        for state in (output, output.get("target")):
            if isinstance(state, dict) and "run_id" in state and "spec" in state:
                seen.setdefault((state["run_id"], state.get("cell_id"), state.get("repeat")), state)
    return list(seen.values())


@dataclass
class CloudBackend:
    """Step Functions + S3 behind the routes."""

    benchmark_arn: str
    suite_arn: str
    bucket: str
    teardown_function: str | None = None
    janitor_function: str | None = None
    region: str | None = None
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls) -> CloudBackend:
        from benchwright.providers.aws.config import ApiSettings

        settings = ApiSettings.from_env()
        return cls(
            benchmark_arn=settings.benchmark_state_machine,
            suite_arn=settings.suite_state_machine,
            bucket=settings.results_bucket,
            teardown_function=settings.teardown_function,
            janitor_function=settings.janitor_function,
            region=settings.region,
        )

    def client(self, name: str) -> Any:
        if name not in self._clients:
            import boto3
            from botocore.config import Config

            config = Config(signature_version="s3v4") if name == "s3" else None
            self._clients[name] = boto3.client(name, region_name=self.region, config=config)
        return self._clients[name]

    # ------------------------------------------------------------------ executions
    def machine(self, kind: str) -> str:
        return self.suite_arn if kind == "suite" else self.benchmark_arn

    def execution_arn(self, kind: str, run_id: str) -> str:
        return self.machine(kind).replace(":stateMachine:", ":execution:") + f":{run_id}"

    def start(self, kind: str, run_id: str, payload: dict[str, Any]) -> str:
        out = self.client("stepfunctions").start_execution(
            stateMachineArn=self.machine(kind), name=run_id, input=json.dumps(payload)
        )
        return str(out["executionArn"])

    def describe(self, run_id: str) -> tuple[str, dict[str, Any]]:
        sfn = self.client("stepfunctions")
        for kind in ("benchmark", "suite"):
            try:
                return kind, sfn.describe_execution(executionArn=self.execution_arn(kind, run_id))
            except sfn.exceptions.ExecutionDoesNotExist:
                continue
        raise RunNotFound(run_id)

    def list_runs(self, status: str | None, limit: int) -> list[tuple[str, dict[str, Any]]]:
        """Newest first; ``status`` as the API names it (INVALID is a FAILED execution that ended in
        an invalid Fail state, so each FAILED one is described for its error: at most ``limit``)."""
        sfn = self.client("stepfunctions")
        out: list[tuple[str, dict[str, Any]]] = []
        for kind in ("benchmark", "suite"):
            kwargs: dict[str, Any] = {"stateMachineArn": self.machine(kind), "maxResults": limit}
            if status:
                kwargs["statusFilter"] = "FAILED" if status == "INVALID" else status
            out += [(kind, e) for e in sfn.list_executions(**kwargs)["executions"]]
        out.sort(key=lambda item: item[1]["startDate"], reverse=True)
        described = []
        for kind, execution in out[:limit]:
            if execution["status"] == "FAILED":
                error = sfn.describe_execution(executionArn=execution["executionArn"]).get("error")
                execution = {**execution, "error": error}
            if not status or api_status(execution) == status:
                described.append((kind, execution))
        return described

    def stop(self, execution_arn: str, cause: str) -> None:
        self.client("stepfunctions").stop_execution(
            executionArn=execution_arn, error="Cancelled", cause=cause
        )

    def latest_states(self, execution_arn: str) -> list[dict[str, Any]]:
        """The newest run state of each cell that a task handed on (they hold the target and runner
        handles), read from the execution history: what Teardown needs to delete exactly that."""
        pages = (
            self.client("stepfunctions")
            .get_paginator("get_execution_history")
            .paginate(executionArn=execution_arn, reverseOrder=True, includeExecutionData=True)
        )
        events = [event for page in pages for event in page.get("events", [])]
        return latest_run_states(events)

    def start_teardown(self, execution_arn: str, run_id: str) -> bool:
        """Stopping an execution skips its Catch -> Teardown, so start Teardown ourselves with each
        cell's last known run state; then ask the janitor to sweep whatever carries the run's tags."""
        invocations: list[tuple[str, dict[str, Any]]] = []
        if self.teardown_function:
            for state in self.latest_states(execution_arn):
                payload = dict(state, caught={"Error": "Cancelled", "Cause": "cancelled through the API"})
                invocations.append((self.teardown_function, payload))
        if self.janitor_function:
            invocations.append((self.janitor_function, {"run_id": run_id, "reason": "cancelled"}))
        for function, payload in invocations:
            self.client("lambda").invoke(
                FunctionName=function, InvocationType="Event", Payload=json.dumps(payload).encode()
            )
        return bool(invocations)

    # ------------------------------------------------------------------ ownership
    def set_owner(self, run_id: str, owner: str) -> None:
        body = json.dumps({"owner": owner, "submitted_at": datetime.now(UTC).isoformat()})
        self.client("s3").put_object(Bucket=self.bucket, Key=OWNER_KEY.format(run_id=run_id), Body=body)

    def owner(self, run_id: str) -> str | None:
        """Who submitted the run; None for a run without the record (only an admin sees those)."""
        s3 = self.client("s3")
        try:
            body = s3.get_object(Bucket=self.bucket, Key=OWNER_KEY.format(run_id=run_id))["Body"].read()
            data = json.loads(body)
        except (s3.exceptions.NoSuchKey, ValueError):
            return None
        owner = data.get("owner") if isinstance(data, dict) else None
        return owner if isinstance(owner, str) else None

    # ------------------------------------------------------------------ results bucket
    def record(self, run_id: str) -> dict[str, Any] | None:
        s3 = self.client("s3")
        try:
            body = s3.get_object(Bucket=self.bucket, Key=RECORD_KEY.format(run_id=run_id))["Body"].read()
        except s3.exceptions.NoSuchKey:
            return None
        data = json.loads(body)
        return data if isinstance(data, dict) else None

    def record_url(self, run_id: str, expires_in: int) -> str | None:
        """A presigned GET for the run's record; None while the workflow has written none."""
        return self._presigned(RECORD_KEY.format(run_id=run_id), expires_in)

    def report_url(self, run_id: str, expires_in: int) -> str | None:
        """A presigned GET for the run's HTML report: where the record says (``report`` as
        s3://<our bucket>/key), else the conventional key; None while there is no report."""
        key = REPORT_KEY.format(run_id=run_id)
        pointer = (self.record(run_id) or {}).get("report")
        prefix = f"s3://{self.bucket}/"
        if isinstance(pointer, str) and pointer.startswith(prefix):
            key = pointer.removeprefix(prefix)
        return self._presigned(key, expires_in)

    def _presigned(self, key: str, expires_in: int) -> str | None:
        """A presigned GET for ``key`` in the results bucket; None when there is no such object."""
        s3 = self.client("s3")
        try:
            s3.head_object(Bucket=self.bucket, Key=key)
        except s3.exceptions.ClientError:
            return None
        return str(
            s3.generate_presigned_url(
                "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=expires_in
            )
        )
