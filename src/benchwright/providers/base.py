"""The provider interfaces every stage talks to; local and AWS implementations sit behind them.

Stages never know whether a target is a throwaway local server or an RDS instance: they call these
methods. Resources follow a template method: the public ``create / status / delete`` here do the
bookkeeping (timing, "already gone is success") and subclasses implement the ``_hooks``. Nothing here
blocks: waiting belongs to the state machine's Wait/Choice loop or to the local orchestrator's one
polling helper.

Secrets: ``Target.connection_properties()`` never contains a password. The runner gets it through
``Target.credentials()``, which the launcher hands to the runner out of band (locally the environment
variable ``BENCHWRIGHT_DB_PASSWORD``; on AWS a Secrets Manager ARN the task resolves itself).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeVar

from benchwright.results import MetricSeries, ResultDocument, redact_text
from benchwright.runner.entry import PASSWORD_ENV, SECRET_ARN_ENV
from benchwright.runner.plan import RunnerPlan
from benchwright.runner_output import RunnerOutput

if TYPE_CHECKING:  # runs.py is written by the store+report engineer; imported lazily to avoid cycles
    from benchwright.runs import CellResult, CostEstimate, RunRecord
    from benchwright.spec import BenchmarkSpec, TargetSpec
    from benchwright.spec.target_facts import TargetBase

TargetStatus = Literal["creating", "ready", "failed", "deleted"]
RunnerStatus = Literal["starting", "running", "succeeded", "failed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- small serializable values
class Credentials(_Model):
    """How the runner authenticates. Never stored in run state, results or logs."""

    password: str | None = Field(default=None, repr=False)
    secret_arn: str | None = None  # AWS: the runner resolves it itself

    def environment(self) -> dict[str, str]:
        """Environment variables that carry the secret into a runner process or container."""
        env: dict[str, str] = {}
        if self.password is not None:
            env[PASSWORD_ENV] = self.password
        if self.secret_arn:
            env[SECRET_ARN_ENV] = self.secret_arn
        return env


class RunnerHandle(_Model):
    """What the workflow keeps about a launched runner: ids and where its results will appear."""

    id: str
    runner_index: int = 0
    result_pointer: str  # file path locally, s3://... on AWS: one runner_output.RunnerOutput
    log_pointer: str | None = None
    launched_at: datetime | None = None
    details: dict[str, str] = Field(default_factory=dict)  # pid, task ARN, AZ id ...


class MetricsWindow(_Model):
    """The measured phase's window; metric points get ``t`` = seconds since ``start``."""

    start: datetime
    end: datetime
    pad_s: float = 0.0


# ---------------------------------------------------------------- target (template method)
# a target section model (spec/target_facts.py), named lazily: this module does not import the spec
SpecT = TypeVar("SpecT", bound="TargetBase", default="TargetBase", covariant=True)


class Target(ABC, Generic[SpecT]):
    """A database the benchmark runs against: created, polled, used, deleted.

    ``spec`` is the spec's target section as its validated model (``benchwright.spec.targets``): a
    target reads typed fields whose defaults and rules the spec owns, and checks nothing again.
    ``handle`` is the small dict of resource ids (instance id, pid, port ...) that goes into the run
    state so another process (a Lambda) can rebuild the target with ``Providers.target`` and delete it.
    """

    kind: str = "abstract"

    def __init__(self, spec: SpecT, run_id: str, handle: Mapping[str, str] | None = None) -> None:
        self.spec = spec
        self.run_id = run_id
        self.handle: dict[str, str] = dict(handle or {})
        self.create_seconds: float | None = None

    # public template methods ---------------------------------------------------------------
    def create(self) -> dict[str, str]:
        """Start creating the resource(s); returns the handle to keep in the run state."""
        t0 = time.monotonic()
        self.handle.update(self._create())
        self.create_seconds = time.monotonic() - t0
        return dict(self.handle)

    def status(self) -> TargetStatus:
        """Non-blocking: "ready" means the database accepts a connection, not merely exists."""
        if not self.handle and self.spec.facts.owned:
            return "deleted"
        return self._status()

    def delete(self) -> None:
        """Idempotent: deleting what is already gone (or never existed) succeeds."""
        if not self.handle and self.spec.facts.owned:
            return
        self._delete()

    @abstractmethod
    def connection_properties(self) -> dict[str, str]:
        """Driver properties (postgres.url, redis.host ...) WITHOUT the password."""

    def credentials(self) -> Credentials:
        """The secret the runner needs; overridden by targets that have one."""
        return Credentials()

    def tags(self) -> dict[str, str]:
        return {"benchwright:run-id": self.run_id}

    def describe(self) -> dict[str, Any]:
        """Facts for the report (engine version, instance class, settings); never secrets."""
        return {"kind": self.kind}

    def fingerprint_facts(self) -> dict[str, str | None]:
        """The target's side of a result's fingerprint (``runner.plan.PlanContext``): its primary's
        AZ name and id, its instance / node class and its storage; None where unknown. Asked once
        the target is ready, before the runners start."""
        return {
            "target_az": self.handle.get("availability_zone") or None,
            "target_az_id": None,
            "target_class": None,
            "storage": None,
        }

    def trigger(self, action: str, params: Mapping[str, Any] | None = None) -> str:
        """Do an event's action (failover, reboot, scale) to the running target; returns a short
        description. Blocking until the action's call returns (locally: the server is back up).
        ``handle`` may change (a restarted process): the caller keeps the new one."""
        from benchwright.errors import CapabilityError

        raise CapabilityError("events", f"a {self.kind} target cannot {action} during a run")

    def operation(self, name: str) -> dict[str, Any]:
        """Run and time an operation benchmark (dump_restore, snapshot_restore ...) on the target
        with its data: the fields of ``results.TimedOperation``. Blocking."""
        from benchwright.errors import CapabilityError

        raise CapabilityError("operations", f"a {self.kind} target cannot run {name}")

    def operation_step(
        self, name: str, progress: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """One non-blocking step of an operation (stages/operations.py): the progress to keep, and
        the finished ``TimedOperation`` fields once it is done. A cloud target steps through its API
        calls one poll at a time; here the step is the whole (blocking, local) ``operation``."""
        return progress, self.operation(name)

    def operation_cleanup(self, name: str, progress: dict[str, Any]) -> None:
        """Delete what a failed operation made (best effort; teardown and the janitor follow)."""

    # hooks ---------------------------------------------------------------------------------
    @abstractmethod
    def _create(self) -> dict[str, str]: ...

    @abstractmethod
    def _status(self) -> TargetStatus: ...

    @abstractmethod
    def _delete(self) -> None: ...


# ---------------------------------------------------------------- an operation's probe
LAST_PROBE_ERROR = "last_probe_error"  # the operation progress key: why the probe failed last
PROBE_ERROR_CHARS = 300  # a driver's message, cut: it goes into the progress and the operation log


def probe_or_none(
    progress: dict[str, Any],
    probe: Callable[[], int],
    where: str,
    fatal: tuple[type[Exception], ...] = (),
) -> int | None:
    """``probe()``, or None while the target does not answer (the next poll probes again, until the
    operation's deadline). The failure is kept in ``progress``: a target that never comes back (a
    wrong password, a refused connection) then times out saying why (``last_probe_error``). A
    ``fatal`` error (no master secret to probe with) cannot mend by waiting: it is raised at once."""
    try:
        return probe()
    except fatal:
        raise
    except Exception as exc:  # not answering yet: tolerated until the deadline, but not forgotten
        text = redact_text(" ".join(str(exc).split()))  # one line, passwords out
        if len(text) > PROBE_ERROR_CHARS:
            text = text[: PROBE_ERROR_CHARS - 3] + "..."
        progress[LAST_PROBE_ERROR] = f"{type(exc).__name__}: {text} ({where})"
        return None


def last_probe_error(progress: Mapping[str, Any]) -> str:
    """The "; last probe error: ..." of an operation's timeout message ("" when no probe failed), so
    that the timeout says why the target did not answer."""
    error = progress.get(LAST_PROBE_ERROR)
    return f"; last probe error: {error}" if error else ""


# ---------------------------------------------------------------- the other providers
class RunnerLauncher(ABC):
    """Starts runner processes / tasks for a plan and tells whether they finished."""

    @abstractmethod
    def launch(self, plan: RunnerPlan, credentials: Credentials, target: Target) -> RunnerHandle:
        """Start one runner (non-blocking); the password travels only through ``credentials``."""

    @abstractmethod
    def status(self, handle: RunnerHandle) -> RunnerStatus: ...

    @abstractmethod
    def results(self, handle: RunnerHandle) -> list[ResultDocument]:
        """The result documents the runner wrote (possibly partial after a crash or abort)."""

    def output(self, handle: RunnerHandle) -> RunnerOutput | None:
        """What the runner wrote so far (documents, when each phase started); None before its first
        write. The event schedule reads the measured phase's start from it while the runner runs."""
        return None

    def stop(self, handle: RunnerHandle) -> None:  # noqa: B027 - optional hook
        """Ask a running runner to stop and keep what it measured (Ctrl-C, workflow abort)."""

    def failure(self, handle: RunnerHandle) -> str | None:
        """Why a failed runner failed (exit code, stop reason), for the run record."""
        return None


class MetricsSource(ABC):
    """Host or cloud metrics for the measured window (CPU, IOPS, burst balance ...)."""

    def start(self, target: Target) -> None:  # noqa: B027 - optional hook
        """Begin sampling (local /proc sampler); cloud sources need nothing."""

    @abstractmethod
    def collect(self, target: Target, window: MetricsWindow) -> list[MetricSeries]:
        """Series with ``t`` = seconds since ``window.start``; stops a sampler started by ``start``."""


class ResultStore(ABC):
    """Durable history of runs. ``save_run`` is idempotent by run id (a re-save replaces)."""

    @abstractmethod
    def save_run(self, record: RunRecord) -> None: ...

    @abstractmethod
    def get_run(self, run_id: str) -> RunRecord | None: ...

    @abstractmethod
    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]: ...


class Notifier(ABC):
    """Posts a run summary somewhere (Slack, stdout). Failing to notify never loses a result.

    Whether to notify at all is the finish stage's decision (``notify.on``); a notifier only sends.
    ``report_url`` is a link the reader can open (a presigned URL on AWS, a path locally). Returns
    whether a message went out (False: nowhere to send it, e.g. an empty Slack secret). ``site_url`` is
    the nightly site's index (a presigned URL on AWS): a bearer link, sent, never logged."""

    @abstractmethod
    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool: ...


class PriceBook(ABC):
    """Cost of a run: target and runner time, storage, IOPS. Local runs cost nothing."""

    @abstractmethod
    def estimate(
        self, spec: BenchmarkSpec, cell: CellResult | None, duration_s: float
    ) -> CostEstimate | None: ...


class ArtifactStore(ABC):
    """Where large payloads live (result documents, metric series); only pointers travel in state."""

    @abstractmethod
    def put_json(self, key: str, data: Any) -> str:
        """Store ``data`` as JSON under ``key``; returns its pointer (path or s3:// URI)."""

    @abstractmethod
    def get_json(self, pointer: str) -> Any: ...

    @abstractmethod
    def put_report(self, run_id: str, html: str) -> str:
        """Store the run's HTML report where readers look for it; returns its pointer."""

    def share(self, pointer: str, expires_s: int) -> str:
        """A link to ``pointer`` a reader can open (a presigned URL on AWS); locally the path itself."""
        return pointer


TargetFactory = Callable[["TargetSpec", str, Mapping[str, str] | None], Target]


@dataclass
class Providers:
    """One of each provider; the orchestrator (local or Step Functions) picks the implementations.

    ``target`` builds a Target from the spec's target section (its model), the run id and (when
    rebuilding in a later stage) the handle kept in the run state.
    """

    target: TargetFactory
    launcher: RunnerLauncher
    metrics: MetricsSource
    store: ResultStore
    notifier: Notifier
    prices: PriceBook
    artifacts: ArtifactStore
