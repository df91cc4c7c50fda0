"""Is a run's Step Functions execution still running? What the janitor asks before it deletes an
expired resource, so a long suite's target is never reaped while its cells still run.

Executions are named by run id (the API names them so; a scheduled one takes its name as run id)
and a suite's cells (``<suite run id>-NNN``) run inside their suite's execution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchwright.providers.aws.common import Clients

CELL_SUFFIX = re.compile(r"^(?P<suite>.+)-\d{3}$")


def execution_names(run_id: str) -> list[str]:
    """The executions that may be running ``run_id``: its own, and its suite's for a suite cell."""
    match = CELL_SUFFIX.match(run_id)
    return [run_id, match["suite"]] if match else [run_id]


def execution_arn(state_machine_arn: str, name: str) -> str:
    return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"


@dataclass
class RunningExecutions:
    """Answers per run id, once per sweep: True running, False ended or never started here, None
    when Step Functions could not be asked (the janitor then falls back to the expires-at tag)."""

    clients: Clients
    state_machines: list[str]
    _seen: dict[str, bool | None] = field(default_factory=dict)

    def __call__(self, run_id: str | None) -> bool | None:
        if not run_id or not self.state_machines:
            return None if not self.state_machines else False
        if run_id not in self._seen:
            self._seen[run_id] = self._ask(run_id)
        return self._seen[run_id]

    def _ask(self, run_id: str) -> bool | None:
        from botocore.exceptions import BotoCoreError, ClientError

        sfn = self.clients("stepfunctions")
        for name in execution_names(run_id):
            for machine in self.state_machines:
                try:
                    described = sfn.describe_execution(executionArn=execution_arn(machine, name))
                except ClientError as exc:
                    if exc.response.get("Error", {}).get("Code") == "ExecutionDoesNotExist":
                        continue
                    return None
                except BotoCoreError:
                    return None
                if described.get("status") == "RUNNING":
                    return True
        return False
