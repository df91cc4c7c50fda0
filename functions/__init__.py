"""Lambda entry points: one thin module per state of statemachines/*.asl.json, plus the janitor.

``HANDLERS`` maps the ASL placeholder stem to the handler: the state machine definition uses
``${<Name>FunctionArn}`` for each key, and the CDK stack substitutes it with that Lambda's ARN.
``ENVIRONMENT`` lists the variables every function reads (benchwright.providers.aws.config).
"""

from __future__ import annotations

HANDLERS: dict[str, str] = {
    "ValidateSpec": "functions.validate_spec.handler",
    "ProvisionTarget": "functions.provision_target.handler",
    "CheckTarget": "functions.check_target.handler",
    "LaunchRunner": "functions.launch_runner.handler",
    "CheckRunner": "functions.check_runner.handler",
    "CheckOperations": "functions.check_operations.handler",
    "CollectMetrics": "functions.collect_metrics.handler",
    "JudgeResults": "functions.judge_results.handler",
    "StoreResults": "functions.store_results.handler",
    "PriceRun": "functions.price_run.handler",
    "Teardown": "functions.teardown.handler",
    "FinishRun": "functions.finish_run.handler",
    "ExpandMatrix": "functions.expand_matrix.handler",
    "SummarizeSuite": "functions.summarize_suite.handler",
}
JANITOR_HANDLER = "functions.janitor.handler"

# Placeholders in the ASL files: one per handler above, plus the suite's reference to the benchmark
# state machine (kept for a deployment that prefers startExecution.sync over the inline Map).
BENCHMARK_PLACEHOLDERS = [
    f"{name}FunctionArn" for name in HANDLERS if name not in ("ExpandMatrix", "SummarizeSuite")
]
SUITE_PLACEHOLDERS = [f"{name}FunctionArn" for name in HANDLERS]


def placeholder(name: str) -> str:
    """``ProvisionTarget`` -> ``ProvisionTargetFunctionArn`` (the definition_substitutions key)."""
    return f"{name}FunctionArn"


def environment_names() -> list[str]:
    from benchwright.providers.aws.config import env_names

    return env_names()
