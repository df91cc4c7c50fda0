"""One rehearsal: the whole cloud path of a spec on this machine, then what it left behind.

Order: the runner image (scripts/runner-image build), the synthesized stack, moto in server mode with
the stack's resources and the backend hooks, a Slack receiver; then the runs are started the way AWS
starts them (the API Lambda's ``POST /runs``, or the nightly schedule's own input to the suite machine),
the executions are awaited, and DIR gets execution.json, resources-after.json, slack.json and the
records. Whatever is still running at the end is stopped and reported as a leak.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from benchwright.rehearse.account import (
    DUMMY_ENV,
    Account,
    Function,
    apply_environment,
    assume_function_roles,
    create_account,
    export_environment,
    restore_environment,
    revoke,
)
from benchwright.rehearse.asset import Asset, lambda_asset
from benchwright.rehearse.containers import Containers
from benchwright.rehearse.eventbridge import deliver, status_event
from benchwright.rehearse.hooks import Faults, Hooks, configure_moto
from benchwright.rehearse.lambda_pool import PRICES_ENV, FunctionConfig, LambdaPool, lambda_environment
from benchwright.rehearse.limits import measure
from benchwright.rehearse.prepare import check_cloud, quick_suite, route_slack, spec_json, standin_adjustments
from benchwright.rehearse.principals import assume_principal_roles
from benchwright.rehearse.resources import LEAK_KINDS, snapshot
from benchwright.rehearse.slack import SlackReceiver
from benchwright.rehearse.stack import ACCOUNT, REGION, RehearsalError, repo_root, synth_template
from benchwright.rehearse.transitions import as_written, cell_iteration, count, wait_paths
from benchwright.spec import SuiteSpec, load_suite

# Step Functions Standard: $0.025 per 1,000 state transitions; Lambda x86: $0.0000166667 per GB-s
# and $0.20 per million requests (us-east-1 list prices, November 2026).
SFN_PER_TRANSITION = 0.000025
LAMBDA_PER_GB_S = 0.0000166667
LAMBDA_PER_REQUEST = 0.0000002
LAMBDA_MEMORY_GB = 0.5  # infra/workflow.py: memory_size=512
POLL_S = 2.0  # wait_executions: how often the executions are described


@dataclass
class Outcome:
    """What a rehearsal produced (also written to DIR)."""

    out_dir: Path
    records: list[dict[str, Any]]
    executions: list[dict[str, Any]]
    resources_after: dict[str, list[Any]]
    slack: list[dict[str, Any]]
    transitions_per_cell: float
    lambda_seconds: float
    wall_seconds: float
    events: list[str] = field(default_factory=list)
    standins: list[str] = field(default_factory=list)  # "<engine> rehearsed with a <other> stand-in"
    region: str = REGION
    rehearsal_id: str = ""  # the label value of its containers (containers.LABEL)
    # the same executions with every Wait as written: the extra polls of the capped Waits taken out
    # (a projection from the history, rehearse/transitions.py); equal to the above without a cap
    transitions_per_cell_as_written: float | None = None
    limits: dict[str, Any] = field(default_factory=dict)  # rehearse/limits.py: measured against the quotas

    @property
    def leaked(self) -> bool:
        """Anything the runs left, or that the rehearsal had to stop itself."""
        kinds = [*LEAK_KINDS, "cleaned_up_by_rehearsal"]
        return any(self.resources_after.get(kind) for kind in kinds)


def runner_image() -> str:
    """The image for the current sources (built now unless it exists)."""
    script = repo_root() / "scripts" / "runner-image"
    done = subprocess.run([str(script), "build"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RehearsalError(f"scripts/runner-image build failed: {done.stderr.strip()[-600:]}")
    return done.stdout.strip().splitlines()[-1]


def _api_event(body: dict[str, Any]) -> dict[str, Any]:
    """An API Gateway (REST, IAM auth) proxy event for ``POST /runs``."""
    return {
        "resource": "/runs",
        "path": "/runs",
        "httpMethod": "POST",
        "headers": {"Content-Type": "application/json"},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "pathParameters": None,
        "requestContext": {
            "resourcePath": "/runs",
            "httpMethod": "POST",
            "path": "/prod/runs",
            "stage": "prod",
            "identity": {"userArn": f"arn:aws:iam::{ACCOUNT}:user/rehearsal", "caller": "rehearsal"},
            "requestId": "rehearsal",
        },
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def start_runs(account: Account, suite: SuiteSpec, nightly: bool) -> list[str]:
    """Start the runs as AWS would; the execution ARNs."""
    sfn = account.client("stepfunctions")
    if nightly:
        arns = []
        for schedule in account.schedules:  # EventBridge Scheduler: StartExecution with the schedule's input
            # Scheduler sends no name: Step Functions names the execution with a UUID (moto would use "None")
            started = sfn.start_execution(
                stateMachineArn=schedule["Arn"], name=str(uuid.uuid4()), input=schedule["Input"]
            )
            arns.append(started["executionArn"])
        if not arns:
            raise RehearsalError("the synthesized stack has no nightly schedule for this spec")
        return arns
    api = next(fn for fn in account.functions.values() if fn.handler == "functions.api.handler")
    if len(suite.benchmarks) == 1:
        body: dict[str, Any] = {"spec": spec_json(suite.benchmarks[0])}
    else:
        body = {"suite": {"suite": suite.suite, "benchmarks": [spec_json(b) for b in suite.benchmarks]}}
    response = account.client("lambda").invoke(
        FunctionName=api.name, Payload=json.dumps(_api_event(body)).encode()
    )
    answer = json.loads(response["Payload"].read())
    if response.get("FunctionError") or int(answer.get("statusCode", 500)) != 201:
        raise RehearsalError(f"POST /runs was refused: {answer.get('body') or answer}")
    return [run["execution_arn"] for run in json.loads(answer["body"])["runs"]]


def wait_executions(
    account: Account, arns: list[str], hooks: Hooks, timeout_s: float
) -> list[dict[str, Any]]:
    """Poll the executions until none runs. Each poll is a DescribeExecution per ARN that moto serves
    with this process's CPU, so the loop polls every 2 s; a fault that aborts after a state polls every
    0.5 s, so the abort lands while the next state is still running."""
    sfn = account.client("stepfunctions")
    interval = 0.5 if hooks.faults.abort_after_state else POLL_S
    deadline = time.monotonic() + timeout_s
    aborted = False
    while True:
        described = [sfn.describe_execution(executionArn=arn) for arn in arns]
        if all(d["status"] != "RUNNING" for d in described):
            break
        if hooks.faults.abort_after_state and not aborted:
            done_states = {i.state for i in hooks.invocations}
            if hooks.faults.abort_after_state in done_states:
                for arn in arns:
                    sfn.stop_execution(
                        executionArn=arn, error="Aborted", cause="rehearsal: aborted from outside"
                    )
                hooks.events.append(f"execution aborted from outside after {hooks.faults.abort_after_state}")
                aborted = True
        if time.monotonic() > deadline:
            for arn in arns:
                sfn.stop_execution(executionArn=arn, error="States.Timeout", cause="rehearsal timeout")
            hooks.events.append(f"rehearsal timeout after {timeout_s:.0f} s: executions stopped")
            break
        time.sleep(interval)  # polling moto's interpreter threads; bounded by the deadline
    return [sfn.describe_execution(executionArn=arn) for arn in arns]


def history(account: Account, arn: str) -> list[dict[str, Any]]:
    sfn = account.client("stepfunctions")
    events: list[dict[str, Any]] = []
    token = None
    while True:
        page = sfn.get_execution_history(
            executionArn=arn, maxResults=1000, **({"nextToken": token} if token else {})
        )
        events.extend(page["events"])
        token = page.get("nextToken")
        if not token:
            return events


def read_records(account: Account, bucket: str) -> list[dict[str, Any]]:
    s3 = account.client("s3")
    records = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="runs/"):
        for item in page.get("Contents", []):
            if item["Key"].endswith("/record.json"):
                records.append(json.loads(s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()))
    return records


def _reset_moto(endpoint: str) -> None:
    import urllib.request

    urllib.request.urlopen(
        urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=30
    ).close()


def _sandbox_config(account: Account, asset: Asset, fn: Function, prices: str) -> FunctionConfig:
    """What a sandbox of ``fn`` runs with: its template environment, the Lambda runtime's variables,
    the moto endpoint and credentials, and the rehearsal's price book (no Pricing backend in moto)."""
    aws = {**(fn.credentials or DUMMY_ENV), "AWS_ENDPOINT_URL": account.endpoint, PRICES_ENV: prices}
    env = lambda_environment(fn.name, fn.handler, fn.memory_mb, account.region, asset, fn.environment, aws)
    return FunctionConfig(fn.name, fn.arn, fn.handler, fn.timeout_s, fn.memory_mb, env)


def rehearse(  # pylint: disable=too-many-locals,too-many-statements  # issue 9 (rehearse-examples)
    spec_path: Path,
    out_dir: Path,
    *,
    quick: bool = False,
    quick_s: float = 8.0,
    nightly: bool = False,
    faults: Faults | None = None,
    image: str | None = None,
    wait_cap_s: float | None = 5.0,
    timeout_s: float = 1800.0,
    rounds: int = 1,
) -> Outcome:
    """Run ``spec_path`` through the cloud path on this machine; see the module docstring. With
    ``rounds`` > 1 the runs are started again in the same account once the previous round ended, so a
    later round is judged against the earlier rounds' records (S3 history), as a second night would.
    ``quick_s`` is the length of ``quick``'s timed phases (``--quick`` keeps the default)."""
    from moto.server import ThreadedMotoServer

    from benchwright.providers.local.server_os import free_port

    t0 = time.monotonic()
    suite = load_suite(spec_path)
    region = check_cloud(suite)
    out_dir.mkdir(parents=True, exist_ok=True)
    faults = faults or Faults()
    if quick:
        full, suite = suite, quick_suite(suite, seconds=quick_s)
        if faults.credits_as_forecast:  # the quick cells stand for the full spec's drained buckets
            from benchwright.rehearse.credits_carry import carry, measured_starts, standin_starts

            starts = measured_starts(full)
            suite = carry(suite, starts)
            faults.burst_start = standin_starts(starts)
    suite, notes = standin_adjustments(suite)
    rehearsed_spec = out_dir / "spec.yaml"
    rehearsed_spec.write_text(
        yaml.safe_dump(
            {"suite": suite.suite, "benchmarks": [spec_json(b) for b in suite.benchmarks]}, sort_keys=False
        )
    )
    image = image or runner_image()
    template = synth_template(rehearsed_spec if nightly else None, region=region)
    root = repo_root()
    asset = lambda_asset(root)  # what `cdk synth` bundles, for this interpreter; every handler runs from it
    rehearsal_id = f"r{datetime.now(UTC):%H%M%S}{time.monotonic_ns() % 10000:04d}"
    slack = SlackReceiver()
    slack.down = faults.slack_down
    port = free_port()
    configure_moto()
    previous = apply_environment({"MOTO_PORT": str(port)})
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    _reset_moto(endpoint)  # moto's backends live in this process: start from an empty account
    containers = Containers(rehearsal_id)
    hooks: Hooks | None = None
    stack = contextlib.ExitStack()
    try:
        hooks_env = apply_environment(
            {
                "AWS_ENDPOINT_URL": endpoint,
                "AWS_ACCESS_KEY_ID": "rehearsal",
                "AWS_SECRET_ACCESS_KEY": "rehearsal",
                "AWS_DEFAULT_REGION": region,
                "AWS_REGION": region,
            }
        )
        previous.update({k: v for k, v in hooks_env.items() if k not in previous})
        configure_moto()
        account = create_account(template, endpoint, image, slack.url, region)
        hooks = Hooks(
            account=account,
            containers=containers,
            image=image,
            out_dir=out_dir,
            faults=faults,
            wait_cap_s=wait_cap_s,
        )
        suite, routed = route_slack(suite, spec_slack_secret(account, slack.url))
        hooks.events.extend(notes + routed)
        for state, action in faults.revoke.items():
            revoke(account, state, action)
            hooks.events.append(f"revoked {action} from the role of {state}")
        hooks.sessions.update(assume_function_roles(account))  # each sandbox signs as its function's role
        hooks.sessions.update(assume_principal_roles(account))  # the runners and state machines: theirs
        prices = _prices(root)
        hooks.pool = LambdaPool(
            asset,
            out_dir / "lambda.log",  # what the handlers print: CloudWatch Logs on AWS
            lambda name: _sandbox_config(account, asset, account.functions[name], prices),
        )
        stack.callback(hooks.pool.close)
        hooks.install()
        env_before = apply_environment(export_environment(account))
        previous.update({k: v for k, v in env_before.items() if k not in previous})
        before = snapshot(account)
        described = []
        for _ in range(rounds):
            arns = start_runs(account, suite, nightly)
            described += wait_executions(account, arns, hooks, timeout_s)
        for execution in described:  # what EventBridge would deliver to the stack's rules
            for line in deliver(account, template, status_event(execution)):
                hooks.events.append(f"event {execution['status']}: {line}")
        _settle(hooks)
        executions = []
        total_transitions = 0
        total_as_written = 0
        cells = 0
        paths = wait_paths((repo_root() / "statemachines").glob("*.asl.json"))
        for d in described:
            events = history(account, d["executionArn"])
            n = count(events)
            written = as_written(events, hooks.wait_cap_s, paths)
            total_transitions += n
            total_as_written += written
            ncells = max(1, sum(1 for e in events if cell_iteration(e)))
            cells += ncells
            executions.append(
                {
                    "execution_arn": d["executionArn"],
                    "status": d["status"],
                    "error": d.get("error"),
                    "cause": d.get("cause"),
                    "transitions": n,
                    "cells": ncells,
                    "transitions_per_cell": round(n / ncells, 1),
                    "transitions_as_written": written,
                    "events": json.loads(json.dumps(events, default=str)),
                }
            )
        records = read_records(account, account.bucket)
        after = snapshot(account, before)
        limits = measure(
            executions,
            [(i.function, i.seconds) for i in hooks.invocations],
            {name: fn.timeout_s for name, fn in account.functions.items()},
        )
    finally:
        stack.close()
        cleaned = hooks.cleanup() if hooks is not None else containers.remove_all()
        if hooks is not None:
            hooks.uninstall()
        server.stop()
        slack.close()
        restore_environment(previous)
    after["cleaned_up_by_rehearsal"] = cleaned
    after["access_denied"] = list(hooks.denials) if hooks is not None else []  # services/iam.py; 0 expected
    lambda_seconds = sum(i.seconds for i in hooks.invocations)
    outcome = Outcome(
        out_dir=out_dir,
        records=records,
        executions=executions,
        resources_after=after,
        slack=slack.posts,
        transitions_per_cell=round(total_transitions / max(1, cells), 1),
        transitions_per_cell_as_written=round(total_as_written / max(1, cells), 1),
        lambda_seconds=round(lambda_seconds, 2),
        wall_seconds=round(time.monotonic() - t0, 1),
        events=hooks.events,
        standins=sorted(set(hooks.standin_engines)) + notes,
        region=region,
        rehearsal_id=rehearsal_id,
        limits=limits,
    )
    _write(outcome, hooks, asset)
    return outcome


def spec_slack_secret(account: Account, url: str) -> str:
    """A spec's own Slack secret stands in as one named by the stack's convention
    (``benchwright/slack/<name>``, which its notifying Lambdas may read), holding the receiver's URL."""
    from benchwright.spec.notify import SLACK_SECRET_NAME

    arn: str = account.client("secretsmanager").create_secret(
        Name=f"{SLACK_SECRET_NAME}/rehearsal", SecretString=json.dumps({"webhook_url": url})
    )["ARN"]
    return arn


def _prices(root: Path) -> str:
    """The Price List API has no moto backend: the handlers price through the same PriceBook from the
    checkout's excerpt of the price list (tests/data/pricing, see its README), or outside a checkout
    from the copy that ships in the package (made from those rows). The sandbox's bootstrap reads it
    (lambda_pool.PRICES_ENV) and installs it before the first invocation."""
    prices = root / "tests" / "data" / "pricing"
    return str(prices) if prices.is_dir() else "packaged"


def _settle(hooks: Hooks, timeout_s: float = 60.0) -> None:
    """Containers stopped by StopTask exit within seconds; wait for their watchers (bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(
        not info.get("exited") for info in hooks.tasks.values() if info.get("stop_requested")
    ):
        time.sleep(0.2)


def _write(outcome: Outcome, hooks: Hooks, asset: Asset) -> None:
    out = outcome.out_dir
    cells = sum(e["cells"] for e in outcome.executions)
    total = sum(e["transitions"] for e in outcome.executions)
    invocations = len(hooks.invocations)
    (out / "execution.json").write_text(
        json.dumps(
            {
                "executions": outcome.executions,
                "transitions_per_cell": outcome.transitions_per_cell,
                "transitions_per_cell_as_written": outcome.transitions_per_cell_as_written,
                "lambda_invocations": invocations,
                "lambda_seconds": outcome.lambda_seconds,
                "lambda_seconds_by_state": _by_state(hooks),
                "lambda_asset": asset.describe(),
                "lambda_sandboxes_started": hooks.pool.started if hooks.pool is not None else 0,
                "lambda_invocations_detail": [  # every invocation: where it ran (asset, interpreter)
                    {
                        "state": i.state,
                        "function": i.function,
                        "ok": i.ok,
                        "error_type": i.error_type,
                        "seconds": round(i.seconds, 3),
                        "init_s": None if i.init_s is None else round(i.init_s, 3),
                        "sandbox_pid": i.pid,
                        "asset_hash": asset.hash,
                        "interpreter": asset.python,
                    }
                    for i in hooks.invocations
                ],
                "cost_usd": {
                    "step_functions": round(total * SFN_PER_TRANSITION, 6),
                    "step_functions_as_written": round(
                        sum(e["transitions_as_written"] for e in outcome.executions) * SFN_PER_TRANSITION, 6
                    ),
                    "lambda": round(
                        outcome.lambda_seconds * LAMBDA_MEMORY_GB * LAMBDA_PER_GB_S
                        + invocations * LAMBDA_PER_REQUEST,
                        6,
                    ),
                    "cells": cells,
                },
                "events": outcome.events,
                "limits": outcome.limits,
                # calls evaluated against each principal's policies (services/iam.py); denials are
                # in resources-after.json's access_denied
                "signed_calls": dict(sorted(hooks.signed.items())),
                # calls of run-scoped sessions abac could not evaluate (rehearse/run_sessions.py)
                "run_session_calls_unchecked": list(hooks.run_unchecked),
                "containers": [  # what ECS / EC2 started: the image's ENTRYPOINT unless entrypoint is set
                    {
                        "resource": resource,
                        "name": info["name"],
                        "entrypoint": info.get("entrypoint"),
                        "args": info.get("args"),
                        "exit_code": info.get("exit_code"),
                        "stopped_by": info.get("stop_requested"),
                    }
                    for resource, info in hooks.tasks.items()
                ],
                "wall_seconds": outcome.wall_seconds,
                "region": outcome.region,
                "standins_of_other_engines": outcome.standins,
                "wait_cap_s": hooks.wait_cap_s,
                "note": "transitions counted with Wait states capped at wait_cap_s (stand-ins are ready in "
                "seconds, AWS resources in minutes); null = the ASL's own Wait durations. "
                "transitions_per_cell_as_written projects the same executions with every Wait as written: "
                "each capped Wait counts as capped/written of a poll, each poll loop keeps at least one, "
                "and every poll taken out removes its Wait, check Task and Choice",
            },
            indent=2,
            default=str,
        )
    )
    (out / "resources-after.json").write_text(json.dumps(outcome.resources_after, indent=2, default=str))
    (out / "slack.json").write_text(json.dumps(outcome.slack, indent=2, default=str))
    (out / "records.json").write_text(json.dumps(outcome.records, indent=2, default=str))


def _by_state(hooks: Hooks) -> dict[str, float]:
    out: dict[str, float] = {}
    for i in hooks.invocations:
        out[i.state] = round(out.get(i.state, 0.0) + i.seconds, 3)
    return out
