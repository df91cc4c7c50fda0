"""Backend hooks inside the moto server: where the rehearsal turns API calls into real things.

``Hooks`` holds what the patched backends started (containers, stand-in servers, their CloudWatch
publishers) and the faults to inject; each service's patches live in ``rehearse/services/``:
``lambda_`` (Invoke runs the real handlers in their sandboxes, lambda_pool.py; Step Functions error names; Wait compression), ``ecs``
(RunTask/StopTask drive the runner container), ``ec2`` (runner hosts and EC2 target stand-ins), ``rds``
(RDS and Aurora stand-ins), ``rds_restore`` (snapshots and restores carry the stand-in's data), ``cache`` (ElastiCache and MemoryDB stand-ins), ``ssm`` (Run Command's yb-admin on a YugabyteDB stand-in). ``uninstall`` undoes every
patch, ``cleanup`` stops what is still running and says what it had to stop.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.rehearse.account import Account
from benchwright.rehearse.containers import Containers, ContainerSpec
from benchwright.rehearse.metrics import CreditModel, Publisher
from benchwright.rehearse.services.ec2 import docker_run_of
from benchwright.rehearse.tls import IN_CONTAINER, TlsMaterial, make_tls

__all__ = ["Faults", "Hooks", "Invocation", "configure_moto", "docker_run_of"]


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
    _list_moto_modules_once()


def _list_moto_modules_once() -> None:
    """moto's server looks a request's host up in a listing of its package folder, made again twice
    per request (~180 stat calls, 1.3 ms of CPU: a fifth of what a request costs); the folder does not
    change while the process runs, so it is listed once."""
    import functools

    from moto import backends

    if not hasattr(backends.list_of_moto_modules, "cache_info"):
        listing = backends.list_of_moto_modules
        backends.list_of_moto_modules = functools.cache(lambda: tuple(listing()))


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
    # ASL state -> IAM action its function's role is denied (an explicit Deny added to the role): proves
    # that a permission the stack lacks fails the rehearsal (services/iam.py)
    revoke: dict[str, str] = field(default_factory=dict)
    credits_start: float = 1.0  # burst and CPU credit balances of a new stand-in (fraction of the bucket)
    # a quick rehearsal's gp2 buckets start where the full spec's forecast puts its measured phases
    # (rehearse/credits_carry.py); run.py fills burst_start ("gp2:SIZE" -> fraction) from it
    credits_as_forecast: bool = False
    burst_start: dict[str, float] = field(default_factory=dict)


@dataclass
class Invocation:
    state: str
    seconds: float
    ok: bool
    function: str = ""
    init_s: float | None = None  # the cold start, when this invocation started its sandbox
    pid: int | None = None  # the sandbox process
    error_type: str | None = None


@dataclass
class Hooks:
    """The patched backends and everything they started (to report and clean up)."""

    account: Account
    containers: Containers
    image: str
    out_dir: Path
    faults: Faults = field(default_factory=Faults)
    wait_cap_s: float | None = 5.0  # a Wait state lasts at most this long (services/lambda_.py)
    invocations: list[Invocation] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task ARN / instance id -> container
    standins: dict[str, Any] = field(default_factory=dict)  # resource identifier -> LocalServer
    publishers: dict[str, Publisher] = field(default_factory=dict)  # resource identifier -> its series
    samplers: dict[str, Any] = field(default_factory=dict)  # DB instance -> server_series.ServerSampler
    status: dict[str, str] = field(default_factory=dict)  # stand-in identifier -> the status AWS reports
    instances: dict[str, Any] = field(default_factory=dict)  # identifier -> moto model with a .status
    target_nodes: dict[str, str] = field(default_factory=dict)  # EC2 target instance id -> stand-in id
    standin_engines: list[str] = field(default_factory=list)  # "<engine> rehearsed with a <other> stand-in"
    events: list[str] = field(default_factory=list)
    tokens: dict[str, Any] = field(default_factory=dict)  # RunTask clientToken -> the tasks it started
    request: threading.local = field(default_factory=threading.local)  # clientToken of the RunTask call
    on_state_done: Callable[[str], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    sessions: dict[str, str] = field(
        default_factory=dict
    )  # access key id -> the stack principal it signs for
    denials: list[dict[str, str]] = field(default_factory=list)  # services/iam.py: AccessDenied seen
    signed: dict[str, int] = field(default_factory=dict)  # services/iam.py: calls evaluated, by principal
    # run-scoped roles and their sessions (run_sessions.py): calls decided by abac, not moto
    run_roles: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # role ARN -> statements
    run_sessions: dict[str, Any] = field(default_factory=dict)  # access key id -> RunSession
    run_unchecked: list[dict[str, str]] = field(default_factory=list)  # calls not evaluated, and why
    pool: Any = None  # lambda_pool.LambdaPool: the handlers' sandboxes (services/lambda_.run_handler)
    task_lock: threading.Lock = field(default_factory=threading.Lock)  # services/ecs.py: tasks change whole
    tls: TlsMaterial | None = None  # made with the first stand-in that speaks TLS
    restores: dict[str, Callable[[Any], None]] = field(default_factory=dict)  # services/rds_restore.py
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def install(self) -> None:
        from benchwright.providers.aws.targets.kinds import rehearsal_services
        from benchwright.rehearse import principals, run_sessions
        from benchwright.rehearse.services import cache_calls, iam, lambda_, pi
        from benchwright.rehearse.services.iam import principal_check

        configure_moto()
        self.run_roles = run_sessions.run_roles(self.account.resolver.template, self.account.resolver)
        run_sessions.install(self)
        cache_calls.install()  # calls moto lacks (parameter groups, TestFailover...): the hooks below wrap them
        pi.install(principal_check(self))  # Performance Insights, which moto lacks (services/pi.py)
        for service in (lambda_, iam, principals):  # the workflow's own services
            service.install(self)
        # each AWS target kind's stand-in (its descriptor's ``rehearsal``): RDS and Aurora (with
        # snapshots, restores, reboot and failover), ElastiCache and MemoryDB, EC2, the ECS runner
        for name in rehearsal_services():
            importlib.import_module(name).install(self)

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def patch(self, owner: Any, name: str, value: Any) -> None:
        """Replace ``owner.name`` until ``uninstall``."""
        original = owner.__dict__[name]
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, original))

    # ------------------------------------------------------------------ stand-ins
    def publish(
        self, ident: str, namespace: str, dimensions: dict[str, str], server: Any, model: CreditModel
    ) -> None:
        """Start the stand-in's CloudWatch series (metrics.py), stopped with the stand-in."""
        publisher = Publisher(
            cloudwatch=self.account.client("cloudwatch"),
            namespace=namespace,
            dimensions=dimensions,
            pids=server.server_pids,
            model=model,
        )
        publisher.start()
        self.publishers[ident] = publisher

    def watch_ready(self, ident: str, server: Any) -> None:
        threading.Thread(target=self.ready, args=(ident, server), name=f"ready-{ident}", daemon=True).start()

    def ready(self, ident: str, server: Any, failed_state: str = "incompatible-parameters") -> None:
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
                f"{publisher.namespace} series of {ident}: {publisher.published} samples put, "
                f"{publisher.failures} failed"
            )
        server = self.standins.pop(ident, None)
        for name, sampler in list(self.samplers.items()):  # an instance's, or a cluster's instances'
            if name == ident or sampler.server is server:
                sampler.stop()
                del self.samplers[name]
                self.events.append(
                    f"server series of {name}: {sampler.documents} RDSOSMetrics documents, "
                    f"{sampler.samples} wait-event samples, {sampler.failures} failed"
                )
        if server is not None:
            server.delete()
            self.events.append(f"stand-in for {ident} deleted")

    def record_invocation(self, state: str, function: str, result: Any) -> None:
        """One handler invocation (a ``lambda_pool`` result), counted for the summary; a sandbox's
        timeout or crash also becomes an event of the run."""
        error_type = None if result.ok else str((result.payload or {}).get("errorType"))
        with self.lock:
            self.invocations.append(
                Invocation(state, result.seconds, result.ok, function, result.init_s, result.pid, error_type)
            )
            if error_type in ("Sandbox.Timedout", "Runtime.ExitError", "Runtime.Unknown"):
                self.events.append(f"{state}: {result.payload.get('errorMessage')}")

    def tls_material(self) -> TlsMaterial:
        with self.lock:
            if self.tls is None:
                self.tls = make_tls()
            return self.tls

    def trust(self, spec: ContainerSpec) -> ContainerSpec:
        """A runner container trusts the stand-ins' CA (with the system CAs), as a runner in AWS
        trusts the CA of an ElastiCache endpoint."""
        if self.tls is not None:
            spec.volumes[str(self.tls.directory)] = IN_CONTAINER
            spec.environment["SSL_CERT_FILE"] = f"{IN_CONTAINER}/{self.tls.bundle.name}"
        return spec

    def keep_logs(self, name: str) -> None:
        """A container's log into DIR/containers/, then the container is removed."""
        logs = self.containers.logs(name)
        log_dir = self.out_dir / "containers"
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"{name}.log").write_text(logs)
        self.containers.remove(name)

    def cleanup(self) -> list[str]:
        """Stop what is still running (stand-ins, containers); what had to be stopped."""
        left = [f"stand-in {ident}" for ident in list(self.standins)]
        for ident in list(self.standins):
            self.stop_standin(ident)
        left += [f"container {name}" for name in self.containers.remove_all()]
        if self.tls is not None:
            self.tls.remove()
        return left
