"""SummarizeSuite: merge the cells' run records into the suite run's record, then finish the suite run
with the same finish stage a single run gets (verdict against history, report, one Slack message)."""

from __future__ import annotations

from typing import Any

from benchwright.providers.aws import aws_providers
from benchwright.stages import RunState, stage_function
from benchwright.stages.suite import summarize
from functions._common import clients, logger, metrics, providers_for, settings, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    summary = summarize(event, aws_providers({}, settings(), clients=clients(), ingest=False).store)
    spec = dict(event.get("spec") or {})
    state = RunState(
        run_id=summary["run_id"],
        spec_name=str(event.get("spec_name") or spec.get("name") or "suite"),
        spec=spec,
        status="failed" if summary["status"] == "failed" else "running",
        error=summary.get("error"),
    )
    finished = stage_function("finish_run")(state, providers_for(state, "finish_run"))
    for warning in finished.warnings:
        logger.warning(warning)
    summary.update(status=finished.status, notification=finished.notification)
    logger.info("suite summarized", extra={k: v for k, v in summary.items() if k != "cell_results"})
    return summary
