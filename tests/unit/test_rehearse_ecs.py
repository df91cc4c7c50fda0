"""The rehearsal's ECS stand-in (rehearse/services/ecs.py) without containers: what DescribeTasks
answers while the watcher thread stops the task. The launcher decides a runner's fate from one answer
(lastStatus STOPPED and every container's exitCode 0), so an answer must hold one moment."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from benchwright.rehearse.account import Account
from benchwright.rehearse.containers import ContainerSpec
from benchwright.rehearse.hooks import Hooks
from benchwright.rehearse.services import ecs as ecs_standin
from benchwright.rehearse.stack import ACCOUNT, REGION, Resolver


class ExitOnCue:
    """A container engine whose container exits (code 0) only when the test says so."""

    rehearsal_id = "unit"

    def __init__(self) -> None:
        self.exit = threading.Event()

    def start(self, spec: ContainerSpec) -> str:
        return spec.name

    def wait(self, name: str) -> int:
        assert self.exit.wait(timeout=30), "the test never let the container exit"
        return 0

    def logs(self, name: str) -> str:
        return ""

    def remove(self, name: str) -> None:
        pass

    def kill(self, name: str) -> None:
        self.exit.set()


def test_a_task_stopping_while_described_is_answered_whole(tmp_path: Path) -> None:
    """The watcher stops the task right after moto has serialised the container (exitCode not yet
    set) and before it serialises the task's lastStatus, the interleaving of a flaky CI run: the
    answer must not be STOPPED without an exit code (the launcher's "failed", with the next answer
    saying "EssentialContainerExited ... exit codes [0]")."""
    from moto.ecs.models import Container, ecs_backends
    from moto.moto_api import state_manager

    engine = ExitOnCue()
    role = f"arn:aws:iam::{ACCOUNT}:role/runner-task"
    session = {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_SESSION_TOKEN": "t"}
    hooks = Hooks(
        account=Account(
            endpoint="http://unused", resolver=Resolver(template={}), role_credentials={role: session}
        ),
        containers=engine,  # type: ignore[arg-type]  # the engine's interface, no podman
        image="runner",
        out_dir=tmp_path,
    )
    with mock_aws():
        state_manager.set_transition(
            model_name="ecs::task", transition={"progression": "manual", "times": 10**9}
        )
        ecs_standin.install(hooks)
        try:
            client = boto3.client("ecs", region_name=REGION)
            client.create_cluster(clusterName="bw")
            client.register_task_definition(
                family="runner",
                taskRoleArn=role,  # the container signs with a session of it (rehearse/principals.py)
                containerDefinitions=[{"name": "runner", "image": "r", "memory": 512}],
            )
            started = client.run_task(cluster="bw", taskDefinition="runner", launchType="FARGATE")
            arn = started["tasks"][0]["taskArn"]
            task = ecs_backends[ACCOUNT][REGION].tasks["bw"][arn]
            watcher = next(t for t in threading.enumerate() if t.name == f"watch-{hooks.tasks[arn]['name']}")

            class ExitsOnceRead(Container):
                """Serialising exitCode lets the container exit and the watcher finish, then
                serialisation goes on to lastStatus."""

                cue = True

                @property
                def exitCode(self) -> Any:  # moto's attribute name
                    value = self.__dict__["exitCode"]
                    if ExitsOnceRead.cue:
                        ExitsOnceRead.cue = False
                        engine.exit.set()
                        watcher.join(timeout=30)
                        assert not watcher.is_alive(), "the watcher did not finish"
                    return value

                @exitCode.setter
                def exitCode(self, value: Any) -> None:
                    self.__dict__["exitCode"] = value

            task.containers[0].__class__ = ExitsOnceRead  # type: ignore[type-abstract]  # moto: ABC base
            first = client.describe_tasks(cluster="bw", tasks=[arn])["tasks"][0]
            then = client.describe_tasks(cluster="bw", tasks=[arn])["tasks"][0]
        finally:
            engine.exit.set()  # the watcher ends whatever happened above
            hooks.uninstall()
            state_manager.unset_transition("ecs::task")
    assert not ExitsOnceRead.cue, "the interleaving under test did not happen"
    # the answer given while the task stopped: all before (RUNNING, no exit code) ...
    assert first["lastStatus"] == "RUNNING" and "exitCode" not in first["containers"][0], first
    # ... and the next one all after, as ECS reports a task whose container exited 0
    assert then["lastStatus"] == "STOPPED" and then["stopCode"] == "EssentialContainerExited"
    assert then["stoppedReason"] == "Essential container in task exited"
    assert [c.get("exitCode") for c in then["containers"]] == [0]
