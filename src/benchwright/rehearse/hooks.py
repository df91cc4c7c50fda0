# pylint: disable=too-many-lines  # issue 9: split by rehearse-examples
"""Backend hooks inside the moto server: where the rehearsal turns API calls into real things.

- Lambda Invoke runs the real handler of ``functions/`` named by the template; an exception comes back
  as a function error (``X-Amz-Function-Error: Unhandled`` and ``{"errorType", "errorMessage"}``) so
  the ASL's Catch sees it, and a throttled call is the Invoke API's 429 ``TooManyRequestsException``.
- Step Functions names a Lambda service error ``Lambda.<code>`` as AWS does (moto names it "Exception").
- ECS RunTask starts the runner image in a container with the task definition's environment and
  secrets (resolved from Secrets Manager), the override composed as ECS composes ENTRYPOINT + command;
  the task's status follows the container. StopTask stops it.
- RDS CreateDBInstance starts a stand-in server of the same engine on 127.0.0.1 (with the parameter
  group's settings); the RDS-managed secret holds its password in AWS's shape; DeleteDBInstance
  deletes it. The instance is ``creating`` until the stand-in accepts connections.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.rehearse import events
from benchwright.rehearse.account import Account
from benchwright.rehearse.containers import Containers, ContainerSpec
from benchwright.rehearse.metrics import CreditModel, Publisher
from benchwright.rehearse.stack import ACCOUNT, REGION


def _no_auth_redis() -> Any:
    from benchwright.providers.base import Credentials
    from benchwright.providers.local.servers import RedisServer

    class NoAuth(RedisServer):
        """A replication group without an auth token: Redis with no password."""

        def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
            super()._initialise(base, port, password, user)
            with open(base / "redis.conf", "a") as conf:
                conf.write('requirepass ""\n')  # the last requirepass wins

        def credentials(self) -> Credentials:
            return Credentials()

    return NoAuth


def NoAuthRedis(settings: dict[str, Any], run_id: str) -> Any:
    """``settings``: the Redis server settings (the target section's ``settings``)."""
    from benchwright.spec import LocalTarget

    return _no_auth_redis()(LocalTarget(provider="local", engine="redis", settings=settings), run_id=run_id)


def docker_run_of(script: str) -> tuple[str, list[str], dict[str, str]] | None:
    """(image, command, environment) of the user-data's ``docker run`` line, or None."""
    import shlex

    for line in script.splitlines():
        words = shlex.split(line) if line.strip().startswith("docker run") else []
        if not words:
            continue
        env: dict[str, str] = {}
        i = 2
        while i < len(words) and words[i].startswith("-"):
            if words[i] in {"-e", "--env"}:
                key, _, value = words[i + 1].partition("=")
                env[key] = value
                i += 2
            elif words[i] in {"--network", "--name", "-v", "--user"}:
                i += 2
            else:
                i += 1
        if i < len(words):
            return words[i], words[i + 1 :], env
    return None


def _decode_user_data(user_data: Any) -> str:
    """moto keeps RunInstances' UserData as sent: base64 text (sometimes in a one-item list)."""
    import base64

    if isinstance(user_data, list):
        user_data = user_data[0] if user_data else ""
    if not user_data:
        return ""
    text = str(user_data)
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        return base64.b64decode(text, validate=True).decode()
    return text


class FakeContext:
    """The Lambda context object the powertools decorators read."""

    def __init__(self, name: str) -> None:
        self.function_name = name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
        self.aws_request_id = f"rehearsal-{time.monotonic_ns()}"
        self.log_group_name = f"/aws/lambda/{name}"
        self.log_stream_name = "rehearsal"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


def configure_moto() -> None:
    """Before anything is created: state machines live in the executing (parser) backend, Lambda
    runs no Docker, and an ECS task's status is set by the container watcher, never by moto."""
    import logging

    from moto.core.config import default_user_config
    from moto.moto_api import state_manager

    default_user_config["lambda"]["use_docker"] = False
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    state_manager.set_transition(model_name="ecs::task", transition={"progression": "manual", "times": 10**9})
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise


@dataclass
class Faults:
    """Faults a rehearsal injects (tests and ``--fault``): each is consumed as it fires."""

    throttle: dict[str, int] = field(default_factory=dict)  # ASL state -> Invoke calls to refuse (429)
    kill_runner_after_s: float | None = None  # SIGKILL the runner container this long after it starts
    abort_after_state: str | None = None  # stop the execution from outside once this state has run
    # LaunchRunner's first Invoke runs the handler (the runner starts), then the Invoke API answers 500
    # ServiceException, so Step Functions sees Lambda.ServiceException and may retry the launch
    service_error_after: set[str] = field(default_factory=set)
    slack_down: bool = False  # the webhook answers 500
    credits_start: float = 1.0  # burst and CPU credit balances of a new stand-in (fraction of the bucket)


@dataclass
class Invocation:
    state: str
    seconds: float
    ok: bool


@dataclass
class Hooks:
    """The patched backends and everything they started (to report and clean up)."""

    account: Account
    containers: Containers
    image: str
    out_dir: Path
    faults: Faults = field(default_factory=Faults)
    wait_cap_s: float | None = 5.0  # a Wait state lasts at most this long (see wait_cap)
    invocations: list[Invocation] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task ARN -> what we know
    standins: dict[str, Any] = field(default_factory=dict)  # db identifier -> LocalServer
    publishers: dict[str, Any] = field(default_factory=dict)  # db identifier -> metrics.Publisher
    status: dict[str, str] = field(default_factory=dict)  # stand-in identifier -> the status RDS reports
    instances: dict[str, Any] = field(default_factory=dict)  # db identifier -> moto DBInstance
    events: list[str] = field(default_factory=list)
    tokens: dict[str, Any] = field(default_factory=dict)  # RunTask clientToken -> the tasks it started
    _request: threading.local = field(default_factory=threading.local)  # clientToken of the RunTask call
    on_state_done: Callable[[str], None] | None = None
    _undo: list[Callable[[], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------------ install / remove
    def install(self) -> None:
        configure_moto()
        self._patch_lambda()
        self._patch_sfn_errors()
        self._patch_wait()
        self._patch_ecs()
        self._patch_rds()
        events.install(self)  # RebootDBInstance / FailoverDBCluster restart the stand-in (events.py)
        self._patch_ec2()
        self._patch_elasticache()

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        original = owner.__dict__[name]
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, original))

    # ------------------------------------------------------------------ Lambda
    def _patch_lambda(self) -> None:
        from moto.awslambda.exceptions import LambdaClientError
        from moto.awslambda_simple.models import LambdaSimpleBackend

        hooks = self

        class TooManyRequests(LambdaClientError):
            code = 429

            def __init__(self) -> None:
                super().__init__("TooManyRequestsException", "Rate exceeded (rehearsal throttle)")

        class ServiceError(LambdaClientError):
            code = 500

            def __init__(self) -> None:
                super().__init__("ServiceException", "Internal error (rehearsal: after the function ran)")

        def invoke(
            backend: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
        ) -> bytes:
            name = function_name.rsplit(":", 1)[-1]
            fn = hooks.account.functions.get(name)
            if fn is None:
                raise LambdaClientError("ResourceNotFoundException", f"Function not found: {function_name}")
            with hooks._lock:
                left = hooks.faults.throttle.get(fn.state, 0)
                if left > 0:
                    hooks.faults.throttle[fn.state] = left - 1
                    hooks.events.append(f"throttled {fn.state}")
            if left > 0:
                raise TooManyRequests()
            ok, payload = hooks.run_handler(fn.state, fn.handler, fn.name, json.loads(body or "{}"))
            if fn.state in hooks.faults.service_error_after:
                hooks.faults.service_error_after.discard(fn.state)
                hooks.events.append(f"{fn.state} ran, then Invoke answered 500 ServiceException")
                raise ServiceError()
            if not ok:
                response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps(payload).encode()

        self._patch(LambdaSimpleBackend, "invoke", invoke)

    def run_handler(self, state: str, handler: str, name: str, event: Any) -> tuple[bool, Any]:
        module, func = handler.rsplit(".", 1)
        started = time.monotonic()
        ok = True
        try:
            payload = getattr(importlib.import_module(module), func)(event, FakeContext(name))
        except Exception as exc:
            ok = False
            payload = {"errorType": type(exc).__name__, "errorMessage": str(exc)[:4000]}
        self.invocations.append(Invocation(state, time.monotonic() - started, ok))
        if self.on_state_done is not None:
            self.on_state_done(state)
        return ok, payload

    def _patch_sfn_errors(self) -> None:
        from botocore.exceptions import ClientError
        from moto.stepfunctions.parser.api import HistoryEventType, LambdaFunctionFailedEventDetails
        from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import (
            CustomErrorName,
        )
        from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
        from moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task_lambda import (
            StateTaskLambda,
        )

        original = StateTaskLambda.__dict__["_from_error"]

        def from_error(task: Any, env: Any, ex: Exception) -> Any:
            if isinstance(ex, ClientError):  # AWS: "Lambda.TooManyRequestsException", ...
                error = f"Lambda.{ex.response['Error']['Code']}"
                cause = ex.response["Error"].get("Message", "")
                details: Any = {
                    "lambdaFunctionFailedEventDetails": LambdaFunctionFailedEventDetails(
                        error=error, cause=cause
                    )
                }
                return FailureEvent(
                    env=env,
                    error_name=CustomErrorName(error),
                    event_type=HistoryEventType.LambdaFunctionFailed,
                    event_details=details,
                )
            return original(task, env, ex)

        self._patch(StateTaskLambda, "_from_error", from_error)

    def _patch_wait(self) -> None:
        """Time compression: stand-ins are ready in seconds and the poll interval is sized for AWS
        (minutes), so a Wait lasts at most ``wait_cap_s``. The transitions counted are the ones of this
        cadence; execution.json says so."""
        from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
            WaitFunction,
        )

        cap = self.wait_cap_s
        if cap is None:
            return

        def eval_body(wait: Any, env: Any) -> None:
            seconds = wait._get_wait_seconds(env=env)
            wait._wait_interval(env=env, wait_seconds=min(int(seconds), int(cap)))

        self._patch(WaitFunction, "_eval_body", eval_body)

    # ------------------------------------------------------------------ ECS
    def _patch_ecs(self) -> None:
        from moto.ecs.models import EC2ContainerServiceBackend

        hooks = self
        run_task = EC2ContainerServiceBackend.__dict__["run_task"]
        stop_task = EC2ContainerServiceBackend.__dict__["stop_task"]

        def patched_run(backend: Any, *args: Any, **kwargs: Any) -> Any:
            token = getattr(hooks._request, "client_token", None)
            if token and token in hooks.tokens:  # RunTask clientToken: the same call returns the same tasks
                hooks.events.append("RunTask repeated with the same clientToken: no new task")
                return hooks.tokens[token]
            tasks = run_task(backend, *args, **kwargs)
            if token:
                hooks.tokens[token] = tasks
            for task in tasks:
                task.status = "PROVISIONING"
                task.containers[0].exitCode = None
                task.containers[0].last_status = "PENDING"
                hooks.start_task(backend, task)
            return tasks

        def patched_stop(backend: Any, cluster_str: str, task_str: str, reason: str) -> Any:
            task = stop_task(backend, cluster_str, task_str, reason)
            info = hooks.tasks.get(task.task_arn)
            if info is not None and not info.get("exited"):
                info["stop_requested"] = reason
                hooks.containers.kill(info["name"])
            return task

        from moto.ecs.responses import EC2ContainerServiceResponse

        response_run = EC2ContainerServiceResponse.__dict__["run_task"]

        def patched_response(response: Any) -> Any:  # moto drops clientToken before the backend sees it
            hooks._request.client_token = response._get_param("clientToken")
            try:
                return response_run(response)
            finally:
                hooks._request.client_token = None

        self._patch(EC2ContainerServiceResponse, "run_task", patched_response)
        self._patch(EC2ContainerServiceBackend, "run_task", patched_run)
        self._patch(EC2ContainerServiceBackend, "stop_task", patched_stop)

    def compose(self, backend: Any, task: Any) -> ContainerSpec:
        """The container ECS would start for ``task``: definition + overrides, secrets resolved."""
        from moto.secretsmanager.models import secretsmanager_backends

        definition = backend.describe_task_definition(task.task_definition_arn)
        container = dict(definition.container_definitions[0])
        override: dict[str, Any] = next(
            (
                o
                for o in (task.overrides or {}).get("containerOverrides", [])
                if o.get("name") == container.get("name")
            ),
            {},
        )
        env = {e["name"]: str(e["value"]) for e in container.get("environment") or []}
        env.update({e["name"]: str(e["value"]) for e in override.get("environment") or []})
        secrets: Any = secretsmanager_backends[ACCOUNT][REGION]
        for item in container.get("secrets") or []:
            value_from = str(item["valueFrom"])
            # ARN[:json-key[:version-stage[:version-id]]] (the ECS form); a JSON key picks one field
            parts = value_from.split(":")
            arn, key = ":".join(parts[:7]), (parts[7] if len(parts) > 7 else "")
            value = secrets.get_secret_value(arn, None, None)["SecretString"] or ""
            env[item["name"]] = str(json.loads(value)[key]) if key else value
        env.update(
            {
                "AWS_ENDPOINT_URL": self.account.endpoint,
                "AWS_ACCESS_KEY_ID": "rehearsal",
                "AWS_SECRET_ACCESS_KEY": "rehearsal",
                "AWS_REGION": REGION,
                "AWS_DEFAULT_REGION": REGION,
                "ECS_CONTAINER_METADATA_URI_V4": "",
            }
        )
        command = override.get("command") if override.get("command") is not None else container.get("command")
        return ContainerSpec(
            name=f"bw-{self.containers.rehearsal_id}-{task.id[:8]}",
            image=str(container.get("image") or self.image),
            args=[str(a) for a in command or []],
            environment=env,
            entrypoint=container.get("entryPoint"),
        )

    def start_task(self, backend: Any, task: Any) -> None:
        spec = self.compose(backend, task)
        info: dict[str, Any] = {"name": spec.name, "args": spec.args, "entrypoint": spec.entrypoint}
        self.tasks[task.task_arn] = info
        self.containers.start(spec)
        task.status = "RUNNING"
        task.containers[0].last_status = "RUNNING"
        info["started"] = time.time()
        threading.Thread(
            target=self._watch, args=(task, info), name=f"watch-{spec.name}", daemon=True
        ).start()
        if self.faults.kill_runner_after_s is not None:
            delay, self.faults.kill_runner_after_s = self.faults.kill_runner_after_s, None

            def kill() -> None:
                time.sleep(delay)  # the fault's own timing: the container is killed mid-run
                if not info.get("exited"):
                    self.events.append(f"killed runner container {spec.name} after {delay:.0f} s")
                    self.containers.kill(spec.name)

            threading.Thread(target=kill, daemon=True).start()

    def _keep_logs(self, name: str) -> None:
        logs = self.containers.logs(name)
        log_dir = self.out_dir / "containers"
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"{name}.log").write_text(logs)
        self.containers.remove(name)

    def _watch(self, task: Any, info: dict[str, Any]) -> None:
        code = self.containers.wait(info["name"])
        self._keep_logs(info["name"])
        info["exit_code"] = code
        info["exited"] = time.time()
        task.containers[0].exitCode = code
        task.containers[0].last_status = "STOPPED"
        if info.get("stop_requested"):
            task.stop_code = "UserInitiated"
            task.stopped_reason = str(info["stop_requested"])
        else:
            task.stop_code = "EssentialContainerExited"
            task.stopped_reason = "Essential container in task exited"
        task.desired_status = "STOPPED"
        task.status = "STOPPED"

    # ------------------------------------------------------------------ ElastiCache
    def _patch_elasticache(self) -> None:
        """CreateReplicationGroup starts a Redis stand-in (no AUTH, as a group without an auth token);
        its primary endpoint is 127.0.0.1; the group is ``creating`` until Redis answers PING."""
        from moto.elasticache.models import ElastiCacheBackend

        hooks = self
        create = ElastiCacheBackend.__dict__["create_replication_group"]
        delete = ElastiCacheBackend.__dict__["delete_replication_group"]

        def patched_create(backend: Any, replication_group_id: str, *args: Any, **kwargs: Any) -> Any:
            fresh = replication_group_id not in backend.replication_groups
            group = create(backend, replication_group_id, *args, **kwargs)
            if fresh:
                server = hooks.start_redis(replication_group_id, str(getattr(group, "cache_node_type", "")))
                port = int(server.handle["port"])
                for node_group in group.node_groups:
                    node_group["primary_endpoint_address"] = "127.0.0.1"
                    node_group["port"] = port
                    node_group["primary_endpoint"] = {"address": "127.0.0.1", "port": port}
                group.status = "creating"
                hooks.instances[replication_group_id] = group
                threading.Thread(
                    target=hooks._ready, args=(replication_group_id, server), daemon=True
                ).start()
            return group

        def patched_delete(backend: Any, replication_group_id: str, *args: Any, **kwargs: Any) -> Any:
            group = delete(backend, replication_group_id, *args, **kwargs)
            hooks.stop_standin(replication_group_id)
            return group

        self._patch(ElastiCacheBackend, "create_replication_group", patched_create)
        self._patch(ElastiCacheBackend, "delete_replication_group", patched_delete)

    def start_redis(self, ident: str, node_type: str) -> Any:
        server = NoAuthRedis({}, run_id=ident)
        server.create()
        self.standins[ident] = server
        model = CreditModel(instance_class=node_type, storage_type="memory", size_gb=0)
        publisher = Publisher(
            cloudwatch=self.account.client("cloudwatch"),
            namespace="AWS/ElastiCache",
            dimensions={"ReplicationGroupId": ident},
            pids=server.server_pids,
            model=model,
        )
        publisher.start()
        self.publishers[ident] = publisher
        self.events.append(f"stand-in redis for {ident} on 127.0.0.1:{server.handle['port']}")
        return server

    # ------------------------------------------------------------------ EC2 runners
    def _patch_ec2(self) -> None:
        """RunInstances whose user-data runs the runner image (``docker run ... IMAGE COMMAND``): the
        rehearsal is the host. The host's setup lines (dnf, systemctl, docker pull) are skipped; the
        ``docker run`` line runs with this machine's engine, its ``-e`` variables and arguments as
        written; when the container ends the instance powers off (InstanceInitiatedShutdownBehavior
        terminate). TerminateInstances stops it."""
        from moto.ec2.models.instances import InstanceBackend

        hooks = self
        run = InstanceBackend.__dict__["run_instances"]
        terminate = InstanceBackend.__dict__["terminate_instances"]

        def patched_run(
            backend: Any, image_id: str, count: int, user_data: Any, *args: Any, **kwargs: Any
        ) -> Any:
            reservation = run(backend, image_id, count, user_data, *args, **kwargs)
            spec = docker_run_of(_decode_user_data(user_data))
            if spec is not None:
                for instance in reservation.instances:
                    hooks.start_instance(backend, instance, spec)
            return reservation

        def patched_terminate(backend: Any, instance_ids: list[str]) -> Any:
            for instance_id in instance_ids:
                info = hooks.tasks.get(instance_id)
                if info is not None and not info.get("exited"):
                    info["stop_requested"] = "TerminateInstances"
                    hooks.containers.kill(info["name"])
            return terminate(backend, instance_ids)

        self._patch(InstanceBackend, "run_instances", patched_run)
        self._patch(InstanceBackend, "terminate_instances", patched_terminate)

    def start_instance(
        self, backend: Any, instance: Any, found: tuple[str, list[str], dict[str, str]]
    ) -> None:
        image, command, env = found
        spec = ContainerSpec(
            name=f"bw-{self.containers.rehearsal_id}-{instance.id[-8:]}",
            image=image,
            args=command,
            environment={
                **env,
                "AWS_ENDPOINT_URL": self.account.endpoint,
                "AWS_ACCESS_KEY_ID": "rehearsal",
                "AWS_SECRET_ACCESS_KEY": "rehearsal",
            },
        )
        info: dict[str, Any] = {"name": spec.name, "args": spec.args, "entrypoint": None, "ec2": True}
        self.tasks[instance.id] = info
        self.containers.start(spec)
        info["started"] = time.time()

        def watch() -> None:
            code = self.containers.wait(spec.name)
            self._keep_logs(spec.name)
            info["exit_code"] = code
            info["exited"] = time.time()
            if not info.get("stop_requested"):  # the user-data's trap: shutdown -h now
                try:
                    backend.terminate_instances([instance.id])
                except Exception as exc:  # reported: the instance would stay up
                    self.events.append(f"instance {instance.id} did not power off: {exc}")

        threading.Thread(target=watch, name=f"watch-{spec.name}", daemon=True).start()

    # ------------------------------------------------------------------ RDS
    def _patch_rds(self) -> None:
        from moto.rds.models import DBCluster, DBInstance, MasterUserSecret, RDSBackend

        hooks = self
        create_cluster = RDSBackend.__dict__["create_db_cluster"]
        delete_cluster = RDSBackend.__dict__["delete_db_cluster"]
        cluster_endpoint = DBCluster.__dict__["endpoint"]
        cluster_status = DBCluster.__dict__["status"]
        create = RDSBackend.__dict__["create_db_instance"]
        delete = RDSBackend.__dict__["delete_db_instance"]
        address = DBInstance.__dict__["address"]
        secret_string = MasterUserSecret.__dict__["_generate_secret_string"]

        def patched_create(backend: Any, db_kwargs: dict[str, Any]) -> Any:
            ident = db_kwargs["db_instance_identifier"]
            if ident not in backend.databases and db_kwargs.get("db_cluster_identifier") is None:
                group = db_kwargs.get("db_parameter_group_name")
                hooks.start_standin(
                    backend, ident, db_kwargs, backend.db_parameter_groups.get(group) if group else None
                )
            database = create(backend, db_kwargs)
            server = hooks.standins.get(ident)
            if server is not None:
                database.port = int(server.handle["port"])
                database.status = "creating"
                hooks.instances[ident] = database
                threading.Thread(target=hooks._ready, args=(ident, server), daemon=True).start()
            return database

        def patched_delete(backend: Any, db_instance_identifier: str, *args: Any, **kwargs: Any) -> Any:
            database = delete(backend, db_instance_identifier, *args, **kwargs)
            hooks.stop_standin(db_instance_identifier)
            return database

        def patched_address(database: Any) -> str:
            if database.db_instance_identifier in hooks.standins:
                return "127.0.0.1"
            result: str = address.fget(database)
            return result

        def patched_create_cluster(backend: Any, kwargs: dict[str, Any]) -> Any:
            ident = kwargs["db_cluster_identifier"]
            if ident not in backend.clusters:
                group = kwargs.get("db_cluster_parameter_group_name")
                groups = getattr(backend, "db_cluster_parameter_groups", {})
                hooks.start_standin(
                    backend, ident, {**kwargs, "storage_type": "aurora"}, groups.get(group) if group else None
                )
            cluster = create_cluster(backend, kwargs)
            server = hooks.standins.get(ident)
            if server is not None:
                cluster.port = int(server.handle["port"])
                hooks.status[ident] = "creating"
                threading.Thread(target=hooks._ready, args=(ident, server), daemon=True).start()
            return cluster

        def patched_delete_cluster(backend: Any, cluster_identifier: str, *args: Any, **kwargs: Any) -> Any:
            cluster = delete_cluster(backend, cluster_identifier, *args, **kwargs)
            hooks.stop_standin(cluster_identifier)
            return cluster

        def patched_cluster_endpoint(cluster: Any) -> str:
            if cluster.db_cluster_identifier in hooks.standins:
                return "127.0.0.1"
            result: str = cluster_endpoint.fget(cluster)
            return result

        def patched_cluster_status(cluster: Any) -> str:
            known = hooks.status.get(cluster.db_cluster_identifier)
            if known is not None and cluster._status in {"creating", "available"}:
                return known
            result: str = cluster_status.fget(cluster)
            return result

        def set_cluster_status(cluster: Any, value: str) -> None:
            cluster._status = value

        def patched_secret(secret: Any) -> str:
            resource = secret.resource
            ident = (
                getattr(resource, "db_cluster_identifier", None) if isinstance(resource, DBCluster) else None
            )
            server = hooks.standins.get(str(ident or getattr(resource, "db_instance_identifier", "")))
            if server is None:
                result: str = secret_string(secret)
                return result
            # RDS-managed secrets hold exactly {"username", "password"}
            return json.dumps(
                {"username": resource.master_username, "password": server.credentials().password}
            )

        self._patch(RDSBackend, "create_db_cluster", patched_create_cluster)
        self._patch(RDSBackend, "delete_db_cluster", patched_delete_cluster)
        self._patch(DBCluster, "endpoint", property(patched_cluster_endpoint))
        self._patch(DBCluster, "status", property(patched_cluster_status, set_cluster_status))
        self._patch(RDSBackend, "create_db_instance", patched_create)
        self._patch(RDSBackend, "delete_db_instance", patched_delete)
        self._patch(DBInstance, "address", property(patched_address))
        self._patch(MasterUserSecret, "_generate_secret_string", patched_secret)

    def start_standin(self, backend: Any, ident: str, db_kwargs: dict[str, Any], group: Any = None) -> None:
        """A server of the engine on 127.0.0.1 with the parameter group's settings, and its metrics."""
        from benchwright.providers.local.servers import MariaDbServer, PostgresServer
        from benchwright.spec import LocalTarget

        engine = str(db_kwargs.get("engine", "postgres"))
        cls = PostgresServer if "postgres" in engine else MariaDbServer
        settings: dict[str, Any] = {}
        if group is not None:
            settings = {k: v["ParameterValue"] for k, v in group.parameters.items() if "ParameterValue" in v}
        local = LocalTarget(
            provider="local", engine="postgres" if cls is PostgresServer else "mysql", settings=settings
        )
        server = cls(local, run_id=ident)
        server.create()
        self.standins[ident] = server
        model = CreditModel(
            instance_class=str(db_kwargs.get("db_instance_class") or ""),
            storage_type=str(db_kwargs.get("storage_type") or "gp2"),
            size_gb=float(db_kwargs.get("allocated_storage") or 20),
            start_fraction=self.faults.credits_start,
        )
        publisher = Publisher(
            cloudwatch=self.account.client("cloudwatch"),
            namespace="AWS/RDS",
            dimensions={
                "DBClusterIdentifier" if model.storage_type == "aurora" else "DBInstanceIdentifier": ident
            },
            pids=server.server_pids,
            model=model,
        )
        publisher.start()
        self.publishers[ident] = publisher
        self.events.append(f"stand-in {cls.engine} for {ident} on 127.0.0.1:{server.handle['port']}")

    def _ready(self, ident: str, server: Any, failed_state: str = "incompatible-parameters") -> None:
        """``creating`` until the stand-in accepts connections; a stand-in that exits is the failed
        state RDS reports for a parameter it cannot apply."""
        status = "failed"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and ident in self.standins:
            found = server.status()
            if found == "ready":
                status = "available"
                break
            if found == "failed":
                self.events.append(f"stand-in for {ident} failed: {server.failure_reason()}")
                status = failed_state
                break
            time.sleep(0.2)  # polling a process we started, bounded by the deadline
        self.status[ident] = status
        if ident in self.instances:
            self.instances[ident].status = status

    def stop_standin(self, ident: str) -> None:
        publisher = self.publishers.pop(ident, None)
        if publisher is not None:
            publisher.stop()
            self.events.append(
                f"AWS/RDS series of {ident}: {publisher.published} samples put, {publisher.failures} failed"
            )
        server = self.standins.pop(ident, None)
        if server is not None:
            server.delete()
            self.events.append(f"stand-in for {ident} deleted")

    def cleanup(self) -> list[str]:
        """Stop what is still running (stand-ins, containers); what had to be stopped."""
        left = [f"stand-in {ident}" for ident in list(self.standins)]
        for ident in list(self.standins):
            self.stop_standin(ident)
        left += [f"container {name}" for name in self.containers.remove_all()]
        return left
