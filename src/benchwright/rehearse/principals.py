"""The stack's principals other than the Lambdas, signing in a rehearsal as they sign on AWS.

- The runner task (Fargate): ECS hands the container credentials of the task definition's task role
  (services/ecs.py puts a session of that role in the container's environment).
- An EC2 runner: the instance's profile hands the host its role (services/ec2.py does the same for
  the runner container the user-data starts).
- The state machines: Step Functions calls its integrations (here: lambda:InvokeFunction on each
  task's function) as the state machine's role; ``install`` makes moto's interpreter sign with a
  session of the execution's role instead of its fixed ``ak``/``sk`` keys.

Each session's access key id is listed in ``hooks.sessions``, so services/iam.py evaluates its calls
against the role's policies from the template, and a denial is recorded (0 expected).
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

from benchwright.rehearse.stack import ACCOUNT, Resolver, resources_of

if TYPE_CHECKING:
    from benchwright.rehearse.account import Account
    from benchwright.rehearse.hooks import Hooks

RUNNER_TASK = "runner task (Fargate task role)"
RUNNER_EC2 = "EC2 runner (instance profile)"
# moto's Step Functions modules that build a client with boto_client_for (moto 5.2.5)
_SFN = "moto.stepfunctions.parser.asl.component.state.exec"
SFN_CLIENT_MODULES = (
    f"{_SFN}.state_task.lambda_eval_utils",
    *(
        f"{_SFN}.state_task.service.state_task_service_{name}"
        for name in (
            "aws_sdk",
            "batch",
            "dynamodb",
            "ecs",
            "events",
            "glue",
            "sfn",
            "sns",
            "sqs",
            "unsupported",
        )
    ),
    f"{_SFN}.state_map.item_reader.eval.resource_eval_s3",
    f"{_SFN}.state_map.result_writer.resource_eval.resource_eval_s3",
)


def principal_roles(template: dict[str, Any], resolver: Resolver) -> dict[str, str]:
    """Role ARN -> the principal that signs with it: the runner task role, the EC2 runner's instance
    profile role and each state machine's role (call once the roles exist in the resolver)."""
    found: dict[str, str] = {}
    for res in resources_of(template, "AWS::ECS::TaskDefinition").values():
        role = resolver.resolve(res["Properties"].get("TaskRoleArn"))
        if role:
            found[str(role)] = RUNNER_TASK
    for logical, res in resources_of(template, "AWS::IAM::InstanceProfile").items():
        if (
            "TargetNode" in logical
        ):  # a self-managed target's nodes: SSM's agent, nothing signs in a rehearsal
            continue
        for name in resolver.resolve(res["Properties"].get("Roles", [])):
            found[f"arn:aws:iam::{ACCOUNT}:role/{name}"] = RUNNER_EC2
    for logical, res in resources_of(template, "AWS::StepFunctions::StateMachine").items():
        role = resolver.resolve(res["Properties"].get("RoleArn"))
        if role:
            kind = "Suite" if "Suite" in logical else "Benchmark"
            found[str(role)] = f"{kind} state machine"
    return found


def assume_principal_roles(account: Account) -> dict[str, str]:
    """A session of each principal role (as ECS, EC2 and Step Functions take one); access key id ->
    who signs with it, for hooks.sessions."""
    sts = account.client("sts")
    sessions: dict[str, str] = {}
    for role_arn, who in account.principals.items():
        session = "rehearsal-" + who.split(" ", 1)[0].lower()
        found = sts.assume_role(RoleArn=role_arn, RoleSessionName=session)["Credentials"]
        account.role_credentials[role_arn] = {
            "AWS_ACCESS_KEY_ID": found["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": found["SecretAccessKey"],
            "AWS_SESSION_TOKEN": found["SessionToken"],
        }
        sessions[found["AccessKeyId"]] = f"{who} ({role_arn.rsplit('/', 1)[-1]})"
    return sessions


def credentials_for(account: Account, role_arn: str | None) -> dict[str, str]:
    """The session of ``role_arn``; a role the rehearsal did not assume is a fault of the rehearsal
    (it would sign with unchecked keys), so it is an error, not a fallback."""
    if not role_arn or role_arn not in account.role_credentials:
        raise KeyError(f"no rehearsal session for the role {role_arn!r}")
    return dict(account.role_credentials[role_arn])


def profile_role(account: Account, profile: Any) -> str | None:
    """The role ARN of an instance's ``IamInstanceProfile`` ({"Name": ...} or {"Arn": ...})."""
    if not isinstance(profile, dict):
        return None
    name = str(profile.get("Name") or str(profile.get("Arn") or "").rsplit("/", 1)[-1])
    return account.instance_profiles.get(name)


def install(hooks: Hooks) -> None:
    """moto's Step Functions interpreter signs each integration call as the execution's role."""
    import boto3
    from botocore.config import Config
    from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import TimeoutSeconds

    account = hooks.account
    built: dict[tuple[str, str, str | None], Any] = {}  # a suite's Map calls thousands of tasks
    lock = threading.Lock()

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        """A client per region, service and role, built once: moto builds one for every task."""
        role = getattr(state_credentials, "role_arn", None)
        keys = credentials_for(account, role)
        with lock:
            if (region, service, role) not in built:
                built[region, service, role] = _client(region, service, keys)
            return built[region, service, role]

    def _client(region: str, service: str, keys: dict[str, str]) -> Any:
        return boto3.client(
            service_name=service,
            region_name=region,
            endpoint_url=account.endpoint,
            aws_access_key_id=keys["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=keys["AWS_SESSION_TOKEN"],
            config=Config(
                parameter_validation=False,
                retries={"max_attempts": 0, "total_max_attempts": 1},
                connect_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
                read_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
            ),
        )

    for name in SFN_CLIENT_MODULES:
        module = importlib.import_module(name)
        if "boto_client_for" in module.__dict__:
            hooks.patch(module, "boto_client_for", boto_client_for)
