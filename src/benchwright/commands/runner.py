"""`benchwright runner --plan PLAN.json --out RESULT.json`: run one cell's phases from a plan.

This is the command the local launcher runs as a subprocess and the container entrypoint runs on
Fargate / EC2. After every phase the output file is rewritten (atomically) with all documents so far,
so a crash or a stop request still leaves the phases already measured. SIGINT and SIGTERM stop the
current phase cleanly: its partial document is kept, marked ``aborted``, and no later phase starts.
The password never appears in the plan: drivers read ``BENCHWRIGHT_DB_PASSWORD`` from the environment.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwright.errors import BenchwrightError, SpecError
from benchwright.providers.base import PhasePlan, RunnerPlan
from benchwright.results import ResultDocument

if TYPE_CHECKING:
    from benchwright.runner.engine import PhaseConfig

EXIT_ABORTED = 3


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("runner", help="run one matrix cell's phases from a plan file (used by `run`)")
    p.add_argument("--plan", required=True, help="plan JSON file or s3://bucket/key (aws extra)")
    p.add_argument(
        "--out", required=True, help="where to write the result documents (file or s3://bucket/key)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(handler=handle)


def _s3_client() -> Any:
    try:
        import boto3
    except ImportError:
        raise SpecError(
            "--plan", "s3:// locations need the aws extra (pip install 'benchwright[aws]')"
        ) from None
    return boto3.client("s3")


def _split_s3(uri: str) -> tuple[str, str]:
    bucket, _, key = uri[5:].partition("/")
    if not bucket or not key:
        raise SpecError(uri, "not an s3://bucket/key location")
    return bucket, key


def read_plan(source: str) -> RunnerPlan:
    try:
        if source.startswith("s3://"):
            bucket, key = _split_s3(source)
            text = _s3_client().get_object(Bucket=bucket, Key=key)["Body"].read().decode()
        else:
            text = Path(source).read_text()
    except OSError as exc:
        raise SpecError(source, f"cannot read the plan ({exc.strerror})") from None
    try:
        return RunnerPlan.model_validate_json(text)
    except ValueError as exc:
        raise SpecError(source, f"not a valid runner plan: {exc}") from None


def write_output(out: str, plan: RunnerPlan, docs: list[ResultDocument], error: str | None) -> None:
    """All documents so far, atomically (a local rename; one PUT on S3)."""
    payload = json.dumps(
        {
            "run_id": plan.run_id,
            "cell_id": plan.cell_id,
            "runner_index": plan.runner_index,
            "documents": [json.loads(d.model_dump_json()) for d in docs],
            "error": error,
        }
    )
    if out.startswith("s3://"):
        bucket, key = _split_s3(out)
        _s3_client().put_object(Bucket=bucket, Key=key, Body=payload.encode(), ContentType="application/json")
        return
    path = Path(out)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(payload)
    tmp.replace(path)


def _progress_printer(phase: str, every_s: float = 2.0) -> Any:
    """A progress line every few seconds (the orchestrator shows them on its console)."""
    last = [0.0]

    def show(elapsed: float, operations: int, rate: float) -> None:
        if elapsed - last[0] >= every_s:
            last[0] = elapsed
            print(f"runner: phase {phase} {elapsed:.0f} s, {operations:,} ops, {rate:,.0f} ops/s", flush=True)

    return show


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


LATE_START_TOLERANCE_S = 1.0  # a release this much after start_at is no longer "together"


def phase_config(plan: RunnerPlan, phase: PhasePlan) -> PhaseConfig:
    """The engine's config for one phase of the plan; the fan-out start instant goes to the measured one."""
    from benchwright.runner.engine import PhaseConfig

    return PhaseConfig(
        workload=phase.workload,
        phase="run" if phase.phase == "warmup" else phase.phase,
        engine=phase.engine,
        properties=dict(phase.properties),
        threads=phase.threads,
        processes=phase.processes,
        target=phase.target,
        operation_count=phase.operation_count,
        max_seconds=phase.max_seconds,
        interval_s=phase.interval_s,
        seed=phase.seed,
        run_id=plan.run_id,
        start_at=plan.start_at if phase.measured else None,
    )


NATIVE_TOOL = "native.tool"  # workload property: measure the phases with pgbench / sysbench / redis-benchmark


def measure_phase(config: PhaseConfig, plan: RunnerPlan, progress: Any) -> ResultDocument:
    """One phase by our engine, or, with ``native.tool`` in the workload's properties, by the tool
    users trust for it (runner/workloads/external/native.py): same settings, the tool's own numbers."""
    tool = config.properties.get(NATIVE_TOOL)
    if not tool:
        from benchwright.runner.engine import run_phase

        return run_phase(config, progress)
    from benchwright.runner.workloads.external.native import run_native

    phase = "load" if config.phase == "load" else "run"
    return run_native(config.workload, phase, config.engine, config.properties, threads=config.threads,
                      seconds=config.max_seconds, rate=config.target, tool=tool, run_id=plan.run_id)  # fmt: skip


def flag_late_start(plan: RunnerPlan, phase: PhasePlan, doc: ResultDocument) -> None:
    """A runner that came up after the shared start instant ran out of step with the others: say so."""
    if not phase.measured or plan.start_at is None:
        return
    late = doc.started_at.timestamp() - plan.start_at
    if late > LATE_START_TOLERANCE_S:
        doc.flag(
            "late_start",
            "warning",
            f"runner {plan.runner_index} of {plan.runner_count} started its measured phase {late:.1f} s "
            "after the synchronised start: the runners did not drive the target together for that time",
        )


def handle(args: argparse.Namespace) -> int:
    from benchwright.runner.server_stats import StatsProbe

    plan = read_plan(args.plan)
    out = str(args.out)
    if not out.startswith("s3://"):
        Path(out).parent.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    docs: list[ResultDocument] = []
    write_output(out, plan, docs, None)
    for phase in plan.phases:
        if not args.quiet:
            print(f"runner: phase {phase.phase} started ({phase.threads} threads)", flush=True)
        config = phase_config(plan, phase)
        stats = StatsProbe(config.engine, config.properties).start()
        try:
            doc = measure_phase(config, plan, None if args.quiet else _progress_printer(phase.phase))
        except KeyboardInterrupt:
            write_output(out, plan, docs, f"interrupted before phase {phase.phase} produced a result")
            return 130
        except BenchwrightError as exc:
            write_output(out, plan, docs, f"{type(exc).__name__}: {exc}")
            print(f"runner: phase {phase.phase} failed: {exc}", file=sys.stderr, flush=True)
            return exc.exit_code
        doc.phase = phase.phase
        doc.cell = plan.cell_id
        doc.server_stats = stats.finish()
        flag_late_start(plan, phase, doc)
        docs.append(doc)
        write_output(out, plan, docs, None)
        if not args.quiet:
            print(
                f"runner: phase {phase.phase} done: {doc.operations_total} ops, {doc.throughput:,.0f} ops/s"
                + (" (aborted)" if doc.aborted else ""),
                flush=True,
            )
        if doc.aborted:
            reasons = "; ".join(f.message for f in doc.validity if f.severity == "invalid")
            write_output(out, plan, docs, f"phase {phase.phase} aborted: {reasons}")
            return EXIT_ABORTED
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m benchwright.commands.runner``: the same command without loading every CLI family
    (the local launcher uses it to save a second of start-up per cell)."""
    parser = argparse.ArgumentParser(prog="benchwright runner")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["runner", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.handler(args) or 0)
    except BenchwrightError as exc:
        print(f"benchwright: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
