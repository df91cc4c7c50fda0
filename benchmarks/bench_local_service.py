"""Figures for the local service (issue 4): how much of `benchwright run` is overhead, and how much
memory the orchestrator and the host-metrics sampler use beyond the runner processes.

    .venv/bin/python benchmarks/bench_local_service.py [--quick] [--spec examples/quickstart.yaml]

Prints: wall time of the run, the time inside measured phases (load, warm-up, run as the runner timed
them), the difference (provisioning, process start-up, judging, storing, reporting, teardown), the
orchestrator's peak RSS (this process: orchestrator + sampler; runners are separate processes), and
the sampler's memory for one hour of 1-second samples. Targets: overhead < 10 s per quickstart,
orchestrator + sampler < 200 MB.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from rich.console import Console  # noqa: E402

from benchwright.local import run_suite, scale_down  # noqa: E402
from benchwright.providers.local import local_providers, open_local_store  # noqa: E402
from benchwright.providers.local.hostmetrics import _Tree, take_sample  # noqa: E402
from benchwright.spec import SuiteSpec, load_suite  # noqa: E402
from benchwright.stages import steps  # noqa: E402

RUNNER_SPANS: list[list[float]] = []


def _time_runner_spans() -> None:
    """Note when each runner is launched and when the orchestrator sees it finished."""
    launch, record = steps.launch_runner, steps.record_results

    def timed_launch(state, providers):  # type: ignore[no-untyped-def]
        out = launch(state, providers)
        RUNNER_SPANS.append([time.perf_counter(), 0.0])
        return out

    def timed_record(state, providers):  # type: ignore[no-untyped-def]
        if RUNNER_SPANS and not RUNNER_SPANS[-1][1]:
            RUNNER_SPANS[-1][1] = time.perf_counter()
        return record(state, providers)

    steps.launch_runner, steps.record_results = timed_launch, timed_record  # type: ignore[assignment]


def sampler_memory_mb(samples: int = 3600) -> float:
    """Memory held by an hour of 1 s samples (what the sampler keeps until ``collect``)."""
    tracemalloc.start()
    tree = _Tree()
    kept = [take_sample(tree, []) for _ in range(samples)]
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return current / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=str(ROOT / "examples" / "quickstart.yaml"))
    parser.add_argument("--quick", action="store_true", help="reduced size (smoke test of the script)")
    args = parser.parse_args()

    _time_runner_spans()
    suite = load_suite(args.spec)
    if args.quick:
        suite = SuiteSpec(suite=suite.suite, benchmarks=[scale_down(b) for b in suite.benchmarks])
    with tempfile.TemporaryDirectory(prefix="bw-bench-") as tmp:
        store = open_local_store(Path(tmp) / "store.sqlite")
        console = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - quiet run, figures only
        t0 = time.perf_counter()
        outcomes = run_suite(
            suite, Path(tmp) / "out", lambda out, spec: local_providers(out, store=store), console
        )
        wall = time.perf_counter() - t0
    measured = (
        sum(doc.runtime_ms for o in outcomes for c in o.record.cells for doc in c.phases.values()) / 1000
    )
    run_only = (
        sum(
            doc.runtime_ms
            for o in outcomes
            for c in o.record.cells
            for name, doc in c.phases.items()
            if name == "run"
        )
        / 1000
    )
    cells = sum(len(o.record.cells) for o in outcomes)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    statuses = ", ".join(f"{o.record.spec_name}={o.record.status}" for o in outcomes)
    print(f"spec:                         {args.spec}{' (--quick)' if args.quick else ''}: {statuses}")
    print(f"cells:                        {cells}")
    print(f"wall time:                    {wall:8.2f} s")
    print(f"measured phases (all):        {measured:8.2f} s   (run phases alone {run_only:.2f} s)")
    print(
        f"overhead (wall - measured):   {wall - measured:8.2f} s   ({(wall - measured) / max(cells, 1):.2f} s per cell)"
    )
    print(f"wall - run phases:            {wall - run_only:8.2f} s")
    runner_wall = sum(b - a for a, b in RUNNER_SPANS if b)
    print(
        f"  runner processes (wall):    {runner_wall:8.2f} s   of which start-up + per-phase setup "
        f"{runner_wall - measured:.2f} s"
    )
    print(f"  orchestrator (provision, judge, store, report, teardown): {wall - runner_wall:.2f} s")
    print(f"orchestrator+sampler peak RSS:{peak_mb:8.1f} MB")
    print(f"sampler, 1 h of 1 s samples:  {sampler_memory_mb():8.2f} MB")
    return 0 if all(o.record.status == "succeeded" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
