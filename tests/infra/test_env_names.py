"""Environment variable names have one source: the settings models the code reads.

The stack writes each Lambda's environment through ``AwsSettings.environment`` / ``ApiSettings
.environment``; here, every ``BENCHWRIGHT_*`` variable in the synthesized template must be one a
settings model reads, and the API and workflow Lambdas must get what their model needs.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.providers.aws.config import ApiSettings, AwsSettings
from tests.infra.test_stack import resources


def lambda_environments(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f["Properties"]["Handler"]: f["Properties"].get("Environment", {}).get("Variables", {})
        for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"].get("Handler", "").startswith("functions.")
    }


def test_every_benchwright_variable_in_the_stack_is_one_a_settings_model_reads(stack: Any) -> None:
    doc = stack
    known = set(AwsSettings.env_names()) | set(ApiSettings.env_names())
    environments = lambda_environments(doc)
    assert len(environments) >= 10, sorted(environments)
    for handler, variables in environments.items():
        ours = {name for name in variables if name.startswith("BENCHWRIGHT_")}
        assert ours, handler
        assert ours <= known, (handler, sorted(ours - known))


def test_the_api_gets_exactly_what_api_settings_reads(stack: Any) -> None:
    doc = stack
    variables = lambda_environments(doc)["functions.api.handler"]
    ours = {name for name in variables if name.startswith("BENCHWRIGHT_")}
    required = {
        ApiSettings.env_name(f) for f in ("results_bucket", "benchmark_state_machine", "suite_state_machine")
    }
    assert required <= ours <= set(ApiSettings.env_names())


def test_a_setting_nothing_reads_cannot_be_written() -> None:
    with pytest.raises(KeyError, match="no setting 'result_bucket'"):
        AwsSettings.environment(result_bucket="b")  # a misspelling fails the synth
    assert AwsSettings.environment(results_bucket="b", slack_secret_arn=None) == {
        "BENCHWRIGHT_RESULTS_BUCKET": "b"
    }


def test_what_the_stack_writes_the_models_read_back() -> None:
    env = AwsSettings.environment(results_bucket="b", subnet_ids="s-1,s-2", ttl_hours="3")
    settings = AwsSettings.from_env(env)
    assert (settings.results_bucket, settings.subnet_ids, settings.ttl_hours) == ("b", ["s-1", "s-2"], 3.0)
    api = ApiSettings.from_env(ApiSettings.environment(benchmark_state_machine="arn:sm", region="eu-west-1"))
    assert (api.benchmark_state_machine, api.region) == ("arn:sm", "eu-west-1")
