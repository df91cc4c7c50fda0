"""ECS inside the moto server: RunTask starts the runner image in a container with the task
definition's environment and secrets (resolved from Secrets Manager), the override composed as ECS
composes ENTRYPOINT + command; the task's status follows the container. StopTask stops it. A repeated
RunTask with the same clientToken returns the first call's tasks (moto ignores the token).

DescribeTasks answers with copies taken under ``hooks.task_lock``, the lock the watcher changes a task
under: moto serialises a task attribute by attribute after the backend returns (``containers`` before
``lastStatus``), so a live task stopping meanwhile could be described STOPPED with no ``exitCode``:
a failed runner to the launcher. A task is described as it was at one moment, as ECS describes it."""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import TYPE_CHECKING, Any

from benchwright.rehearse.containers import ContainerSpec
from benchwright.rehearse.principals import credentials_for
from benchwright.rehearse.stack import ACCOUNT

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


def install(hooks: Hooks) -> None:
    from moto.ecs.models import EC2ContainerServiceBackend
    from moto.ecs.responses import EC2ContainerServiceResponse

    run_task = EC2ContainerServiceBackend.__dict__["run_task"]
    stop_task = EC2ContainerServiceBackend.__dict__["stop_task"]
    describe_tasks = EC2ContainerServiceBackend.__dict__["describe_tasks"]
    response_run = EC2ContainerServiceResponse.__dict__["run_task"]

    def patched_run(backend: Any, *args: Any, **kwargs: Any) -> Any:
        token = getattr(hooks.request, "client_token", None)
        if token and token in hooks.tokens:  # RunTask clientToken: the same call returns the same tasks
            hooks.events.append("RunTask repeated with the same clientToken: no new task")
            return hooks.tokens[token]
        tasks = run_task(backend, *args, **kwargs)
        if token:
            hooks.tokens[token] = tasks
        for task in tasks:
            with hooks.task_lock:
                task.status = "PROVISIONING"
                task.containers[0].exitCode = None
                task.containers[0].last_status = "PENDING"
            start_task(hooks, backend, task)
        return tasks

    def patched_stop(backend: Any, cluster_str: str, task_str: str, reason: str) -> Any:
        with hooks.task_lock:  # moto marks the task stopped in several steps
            task = stop_task(backend, cluster_str, task_str, reason)
        info = hooks.tasks.get(task.task_arn)
        if info is not None and not info.get("exited"):
            info["stop_requested"] = reason
            hooks.containers.kill(info["name"])
        return task

    def patched_describe(backend: Any, cluster_str: str, tasks: list[str]) -> list[Any]:
        found = describe_tasks(backend, cluster_str, tasks)
        with hooks.task_lock:
            return [snapshot(task) for task in found]

    def patched_response(response: Any) -> Any:  # moto drops clientToken before the backend sees it
        hooks.request.client_token = response._get_param("clientToken")
        try:
            return response_run(response)
        finally:
            hooks.request.client_token = None

    hooks.patch(EC2ContainerServiceResponse, "run_task", patched_response)
    hooks.patch(EC2ContainerServiceBackend, "run_task", patched_run)
    hooks.patch(EC2ContainerServiceBackend, "stop_task", patched_stop)
    hooks.patch(EC2ContainerServiceBackend, "describe_tasks", patched_describe)


def snapshot(task: Any) -> Any:
    """A copy of ``task`` and its containers that nothing changes while moto serialises it (call
    under ``hooks.task_lock``): the answer holds one moment's status, exit code and stop reason."""
    copied = copy.copy(task)
    copied.containers = [copy.copy(c) for c in task.containers]
    return copied


def compose(hooks: Hooks, backend: Any, task: Any) -> ContainerSpec:
    """The container ECS would start for ``task``: definition + overrides, secrets resolved."""
    from moto.secretsmanager.models import secretsmanager_backends

    region = hooks.account.region
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
    secrets: Any = secretsmanager_backends[ACCOUNT][region]
    for item in container.get("secrets") or []:
        value_from = str(item["valueFrom"])
        # ARN[:json-key[:version-stage[:version-id]]] (the ECS form); a JSON key picks one field
        parts = value_from.split(":")
        arn, key = ":".join(parts[:7]), (parts[7] if len(parts) > 7 else "")
        value = secrets.get_secret_value(arn, None, None)["SecretString"] or ""
        env[item["name"]] = str(json.loads(value)[key]) if key else value
    role = (task.overrides or {}).get("taskRoleArn") or getattr(definition, "task_role_arn", None)
    env.update(
        {
            "AWS_ENDPOINT_URL": hooks.account.endpoint,
            **credentials_for(hooks.account, role),  # the task role's session, as ECS hands it over
            "AWS_REGION": region,
            "AWS_DEFAULT_REGION": region,
            "ECS_CONTAINER_METADATA_URI_V4": "",
        }
    )
    command = override.get("command") if override.get("command") is not None else container.get("command")
    spec = ContainerSpec(
        name=f"bw-{hooks.containers.rehearsal_id}-{task.id[:8]}",
        image=str(container.get("image") or hooks.image),
        args=[str(a) for a in command or []],
        environment=env,
        entrypoint=container.get("entryPoint"),
    )
    return hooks.trust(spec)


def start_task(hooks: Hooks, backend: Any, task: Any) -> None:
    spec = compose(hooks, backend, task)
    info: dict[str, Any] = {"name": spec.name, "args": spec.args, "entrypoint": spec.entrypoint}
    hooks.tasks[task.task_arn] = info
    hooks.containers.start(spec)
    with hooks.task_lock:
        task.status = "RUNNING"
        task.containers[0].last_status = "RUNNING"
    info["started"] = time.time()
    threading.Thread(target=_watch, args=(hooks, task, info), name=f"watch-{spec.name}", daemon=True).start()
    if hooks.faults.kill_runner_after_s is not None:
        delay, hooks.faults.kill_runner_after_s = hooks.faults.kill_runner_after_s, None

        def kill() -> None:
            time.sleep(delay)  # the fault's own timing: the container is killed mid-run
            if not info.get("exited"):
                hooks.events.append(f"killed runner container {spec.name} after {delay:.0f} s")
                hooks.containers.kill(spec.name)

        threading.Thread(target=kill, daemon=True).start()


def _watch(hooks: Hooks, task: Any, info: dict[str, Any]) -> None:
    code = hooks.containers.wait(info["name"])
    hooks.keep_logs(info["name"])
    info["exit_code"] = code
    info["exited"] = time.time()
    with hooks.task_lock:  # one change: DescribeTasks sees all of it or none of it
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
