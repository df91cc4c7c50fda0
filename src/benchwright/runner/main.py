"""The runner's one entry point: run one cell's phases from a plan and write a ``RunnerOutput``.

Every launcher starts it the same way (``runner.entry``): the local launcher as a subprocess, ECS and
EC2 inside the runner image. After every phase the output is rewritten (atomically: a local rename,
one S3 PUT) with all documents so far, so a crash or a stop request still leaves the phases already
measured. SIGINT and SIGTERM stop the current phase cleanly: its partial document is kept, marked
``aborted``, and no later phase starts.

The password never appears in the plan or the arguments: it comes from ``BENCHWRIGHT_DB_PASSWORD``,
or (on AWS) the runner reads the Secrets Manager secret named by ``BENCHWRIGHT_DB_SECRET_ARN`` itself
and hands the password to its drivers and tools through that same environment variable.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError, SpecError, TargetUnreachable
from benchwright.results import IntervalSample, ResultDocument
from benchwright.runner.entry import PASSWORD_ENV, SECRET_ARN_ENV, SPILL_ENV
from benchwright.runner.fingerprint import stamp
from benchwright.runner.floor import network_floor
from benchwright.runner.host_lock import MeasuringLock, flag_concurrent
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.runner.progress import RunnerEvent
from benchwright.runner_output import PartialPhase, RunnerOutput

EXIT_ABORTED = 3
LATE_START_TOLERANCE_S = 1.0  # a release this much after start_at is no longer "together"
FLUSH_S = 2.0  # the phase in progress is rewritten to the output this often (one PUT on S3)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The runner's arguments; ``benchwright runner`` registers the same ones."""
    parser.add_argument("--plan", required=True, help="plan JSON file or s3://bucket/key (aws extra)")
    parser.add_argument(
        "--out", required=True, help="where to write the result documents (file or s3://bucket/key)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python3 -m benchwright.runner.main`` (what every launcher starts)."""
    parser = argparse.ArgumentParser(
        prog="benchwright-runner", description="Run one matrix cell's phases from a plan file."
    )
    add_arguments(parser)
    return parser


# ---------------------------------------------------------------- AWS access (the aws extra)
_RUN_SESSION: list[Any] = []  # the run-scoped session, made once per process
_RUN_CLIENTS: dict[str, Any] = {}  # its clients, one per service (a session is not thread-safe)
_RUN_LOCK = threading.Lock()  # the interval flusher writes from the engine's thread


def _client(service: str, field: str) -> Any:
    """A client of the run-scoped session when the launcher named a run role (the run's secret and
    prefix only: runner/aws_session.py), else of the standing credentials (local runs)."""
    try:
        import boto3
    except ImportError:
        raise SpecError(field, "AWS locations need the aws extra (pip install 'benchwright[aws]')") from None
    from benchwright.runner.aws_session import RUN_ID_ENV, RUN_ROLE_ENV, run_session

    role = os.environ.get(RUN_ROLE_ENV)
    if not role:
        return boto3.client(service)
    with _RUN_LOCK:
        if not _RUN_SESSION:
            _RUN_SESSION.append(run_session(role, os.environ.get(RUN_ID_ENV, ""), "runner"))
        if service not in _RUN_CLIENTS:
            _RUN_CLIENTS[service] = _RUN_SESSION[0].client(service)
        return _RUN_CLIENTS[service]


def check_run(plan: RunnerPlan, environ: dict[str, str] | None = None) -> None:
    """A run session serves the plan's run and no other: a plan of another run is refused (its
    prefix and secret would be denied anyway, with a less clear error)."""
    from benchwright.runner.aws_session import RUN_ID_ENV, RUN_ROLE_ENV

    env = os.environ if environ is None else environ
    if env.get(RUN_ROLE_ENV) and env.get(RUN_ID_ENV) != plan.run_id:
        raise SpecError(
            RUN_ID_ENV, f"the session serves run {env.get(RUN_ID_ENV)!r}, the plan is of {plan.run_id!r}"
        )


def _split_s3(uri: str) -> tuple[str, str]:
    bucket, _, key = uri[5:].partition("/")
    if not bucket or not key:
        raise SpecError(uri, "not an s3://bucket/key location")
    return bucket, key


def password_from_secret(text: str, arn: str) -> str:
    """The password in a secret: RDS-managed secrets hold ``{"username": ..., "password": ...}``;
    a secret that is not a JSON object is the password itself (an ElastiCache AUTH token, say)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        if not text:
            raise TargetUnreachable(f"database secret {arn}", "the secret is empty")
        return text
    password = data.get("password")
    if not isinstance(password, str) or not password:
        raise TargetUnreachable(
            f"database secret {arn}", "no 'password' key in the secret (RDS-managed secrets have one)"
        )
    return password


def resolve_secret(environ: dict[str, str] | None = None) -> None:
    """On AWS: read the database secret named by ``BENCHWRIGHT_DB_SECRET_ARN`` and put its password in
    ``BENCHWRIGHT_DB_PASSWORD``, where every driver, worker process and native tool looks for it.
    An explicit password wins (local runs never set the ARN)."""
    env = os.environ if environ is None else environ
    arn = env.get(SECRET_ARN_ENV)
    if not arn or env.get(PASSWORD_ENV):
        return
    try:
        response = _client("secretsmanager", SECRET_ARN_ENV).get_secret_value(SecretId=arn)
    except BenchwrightError:
        raise
    except Exception as exc:  # botocore's errors name the secret and the reason, never its value
        raise TargetUnreachable(f"database secret {arn}", f"cannot read it: {exc}") from None
    env[PASSWORD_ENV] = password_from_secret(str(response.get("SecretString") or ""), arn)


# ---------------------------------------------------------------- plan in, output out
def read_plan(source: str) -> RunnerPlan:
    try:
        if source.startswith("s3://"):
            bucket, key = _split_s3(source)
            body = _client("s3", "--plan").get_object(Bucket=bucket, Key=key)["Body"]
            text = body.read().decode()
        else:
            text = Path(source).read_text()
    except OSError as exc:
        raise SpecError(source, f"cannot read the plan ({exc.strerror})") from None
    try:
        return RunnerPlan.model_validate_json(text)
    except ValueError as exc:
        raise SpecError(source, f"not a valid runner plan: {exc}") from None


def write_output(
    out: str,
    plan: RunnerPlan,
    docs: list[ResultDocument],
    error: str | None,
    started: dict[str, datetime] | None = None,
    exit_code: int | None = None,
    partial: PartialPhase | None = None,
) -> None:
    """All documents so far and when each phase started, atomically (a local rename; one PUT on S3).
    ``exit_code`` is the completion marker: set only by the last write, so an output without it is
    a runner that did not finish (killed, or its host went away)."""
    output = RunnerOutput(
        run_id=plan.run_id,
        cell_id=plan.cell_id,
        runner_index=plan.runner_index,
        documents=docs,
        error=error,
        started=dict(started or {}),
        exit_code=exit_code,
        partial=partial,
    )
    payload = output.model_dump_json()
    if out.startswith("s3://"):
        bucket, key = _split_s3(out)
        _client("s3", "--out").put_object(
            Bucket=bucket, Key=key, Body=payload.encode(), ContentType="application/json"
        )
        return
    try:
        _write_atomically(Path(out), payload)
    except OSError:
        spill = os.environ.get(SPILL_ENV)
        if not spill:
            raise
        _write_atomically(Path(spill), payload)  # --out is full or gone: the spill keeps the phases


def _write_atomically(path: Path, payload: str) -> None:
    """A rename over the old output, so a reader never sees half a file; no ``.tmp`` is left behind."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(payload)
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


def emit(event: RunnerEvent) -> None:
    """One progress event, one JSON line on stdout (the orchestrator reads it with ``RunnerEvent``).
    A log that cannot be written (its disk is full) costs the progress line, never the phase."""
    try:
        print(event.line(), flush=True)
    except OSError:  # and from now on to nowhere: an unflushable stdout at exit would fail the runner
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  # lives as long as the process


def _progress_printer(phase: str, every_s: float = 2.0) -> Any:
    """A progress event every few seconds (the orchestrator shows it as a bar or a line)."""
    last = [0.0]

    def show(elapsed: float, operations: int, rate: float) -> None:
        if elapsed - last[0] >= every_s:
            last[0] = elapsed
            emit(RunnerEvent(event="progress", phase=phase, elapsed_s=elapsed, operations=operations,
                             ops_per_s=rate))  # fmt: skip

    return show


def interval_flusher(
    phase: PhaseConfig, partial: PartialPhase, flush: Callable[[], None], printer: Any
) -> Any:
    """The engine's live periods (one per interval) as ``partial``'s intervals, the output rewritten
    with them every ``FLUSH_S``: a runner killed mid-phase leaves what it measured until then."""
    from benchwright.runner.engine import Period, PeriodProgress

    last = [0.0]

    def on_period(period: Period) -> None:
        totals = period.totals
        ops = totals.operations
        partial.intervals.append(
            IntervalSample(
                t=round(period.end_s, 3),
                operations=dict(totals.counts),
                errors=totals.failed,
                throughput=ops / period.seconds if period.seconds else 0.0,
                p50_us=float(totals.histogram.get_value_at_percentile(50)) if ops else 0.0,
                p99_us=float(totals.histogram.get_value_at_percentile(99)) if ops else 0.0,
                max_us=float(totals.histogram.get_max_value()) if ops else 0.0,
            )
        )
        if period.end_s - last[0] >= FLUSH_S:
            last[0] = period.end_s
            try:
                flush()
            except Exception as exc:  # the phase goes on: its document is written when it ends
                with contextlib.suppress(OSError):
                    print(f"warning: intervals not flushed: {exc}", file=sys.stderr)

    return PeriodProgress(phase.interval_s, on_period, printer)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


NATIVE_TOOL = "native.tool"  # workload property: measure the phases with pgbench / sysbench / redis-benchmark


def measure_phase(
    phase: PhaseConfig, run_id: str, progress: Any, on_start: Callable[[datetime], None] | None = None
) -> ResultDocument:
    """One phase of the plan, as it is, by our engine, or, with ``native.tool`` in the workload's
    properties, by the tool users trust for it (runner/workloads/external/native.py): same settings,
    the tool's own numbers. ``on_start`` hears when the engine's measured clock starts (a native
    tool's start is not known: the phase's start stands for it)."""
    tool = phase.properties.get(NATIVE_TOOL)
    if not tool:
        from benchwright.runner.engine import run_phase

        return run_phase(phase, progress, on_start)
    from benchwright.runner.workloads.external.native import run_native

    return run_native(phase, tool=tool, run_id=run_id)


def flag_late_start(plan: RunnerPlan, phase: PhaseConfig, doc: ResultDocument) -> None:
    """A runner that came up after the shared start instant ran out of step with the others: say so."""
    if phase.start_at is None:
        return
    late = doc.started_at.timestamp() - phase.start_at
    if late > LATE_START_TOLERANCE_S:
        doc.flag(
            "late_start",
            "warning",
            f"runner {plan.runner_index} of {plan.runner_count} started its measured phase {late:.1f} s "
            "after the synchronised start: the runners did not drive the target together for that time",
        )


def run(args: argparse.Namespace) -> int:
    """Run the plan's phases in order; the exit code says how it ended (0, 3 aborted, 130 stopped)."""
    from benchwright.runner.server_stats import StatsProbe

    plan = read_plan(args.plan)
    check_run(plan)
    out = str(args.out)
    if not out.startswith("s3://"):
        Path(out).parent.mkdir(parents=True, exist_ok=True)
    # SIGINT is how the local orchestrator stops a runner (providers/local/runner.py): taken here
    # explicitly, as a runner started from a shell's background job inherits SIGINT ignored
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _raise_interrupt)
    docs: list[ResultDocument] = []
    started: dict[str, datetime] = {}  # the workflow times events from these (stages/schedule.py)

    flushed: list[PartialPhase] = []  # the phase in progress, as far as its intervals were flushed

    def write(error: str | None, exit_code: int | None = None) -> None:
        write_output(out, plan, docs, error, started, exit_code, flushed[-1] if flushed else None)

    write(None)
    try:
        resolve_secret()
    except BenchwrightError as exc:
        write(f"{type(exc).__name__}: {exc}", exc.exit_code)
        raise
    for phase in plan.phases:
        if not args.quiet:
            emit(RunnerEvent(event="phase_started", phase=phase.phase, threads=phase.threads))
        started[phase.phase] = datetime.now(UTC)
        write(None)  # one write (a PUT on S3) per phase: where the workflow learns the phase began

        def clock_started(at: datetime, name: str = phase.phase) -> None:
            # the measured clock's zero, after set-up and connecting (TLS can take seconds): events'
            # at_s count from here, so a second write corrects the phase's start (one more PUT)
            started[name] = at
            try:  # the workers run already: a failed write must not leave them unjoined
                write(None)
            except Exception as exc:  # said on stderr; the phase's first start stands
                with contextlib.suppress(OSError):  # the log's disk may be the full one
                    print(f"warning: the measured start of {name} was not written: {exc}", file=sys.stderr)

        floor, no_floor = network_floor(phase)
        stats = StatsProbe(phase.engine, phase.properties).start()
        # the measured phase says whether another benchmark measured on this host meanwhile
        host = MeasuringLock(plan.run_id, plan.cell_id, phase.phase).start() if phase.phase == "run" else None
        try:
            printer = None if args.quiet else _progress_printer(phase.phase)
            flushed[:] = [PartialPhase(
                phase=phase.phase, workload=phase.workload, engine=phase.engine, started_at=started[phase.phase],
                latency="response_time" if phase.target else "service_time", interval_s=phase.interval_s,
            )]  # fmt: skip
            progress = interval_flusher(phase, flushed[0], lambda: write(None), printer)
            doc = measure_phase(phase, plan.run_id, progress, clock_started)
        except KeyboardInterrupt:
            write(f"interrupted before phase {phase.phase} produced a result", 130)
            return 130
        except BenchwrightError as exc:
            write(f"{type(exc).__name__}: {exc}", exc.exit_code)
            emit(RunnerEvent(event="phase_failed", phase=phase.phase, message=str(exc)))
            return exc.exit_code
        finally:
            overlaps = host.finish() if host is not None else []
        doc.run_id, doc.cell, doc.phase = plan.run_id, plan.cell_id, phase.phase
        if host is not None:
            flag_concurrent(doc, host, overlaps)
        doc.server_stats = stats.finish()
        stamp(doc, plan.context, floor, no_floor)
        flag_late_start(plan, phase, doc)
        docs.append(doc)
        flushed.clear()  # the phase's own document replaces what was flushed of it
        write(None)
        if not args.quiet:
            emit(RunnerEvent(event="phase_done", phase=phase.phase, operations=doc.operations_total,
                             ops_per_s=doc.throughput, aborted=doc.aborted))  # fmt: skip
        if doc.aborted:
            reasons = "; ".join(f.message for f in doc.validity if f.severity == "invalid")
            write(f"phase {phase.phase} aborted: {reasons}", EXIT_ABORTED)
            return EXIT_ABORTED
    write(None, 0)  # the completion marker, written last
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python3 -m benchwright.runner.main --plan P --out O``: loads the runner alone, not the CLI."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except BenchwrightError as exc:
        print(f"benchwright-runner: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
