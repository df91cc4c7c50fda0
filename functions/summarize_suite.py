"""SummarizeSuite: merge the cells' run records into the suite run's record, then finish the suite run
with the same finish stage a single run gets (verdict against history, report, one Slack message).

The suite run has no cell state: its input becomes a ``FinishState`` (stages.suite.suite_state) with
the spec ExpandMatrix validated."""

from __future__ import annotations

from typing import Any

from benchwright.stages.finish import finish_run
from benchwright.stages.suite import suite_state, summarize
from functions._common import logger, metrics, providers_for, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    state = suite_state(event)
    providers = providers_for(state, "finish_run")  # no time-series sink: only StoreResults ingests
    summary = summarize(event, state, providers.store)
    failed = summary["status"] == "failed"  # "invalid" is judged again by finish_run from the cells
    state = state.model_copy(
        update={"status": "failed" if failed else "running", "error": summary.get("error")}
    )
    finished = finish_run(state, providers)
    for warning in finished.warnings:
        logger.warning(warning)
    summary.update(status=finished.status, notification=finished.notification)
    logger.info("suite summarized", extra={k: v for k, v in summary.items() if k != "cell_results"})
    return summary
