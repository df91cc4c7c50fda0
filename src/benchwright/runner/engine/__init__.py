"""Runs one phase of a workload: worker processes x threads, pacing, limits, merging, the document.

Layout: the parent process sets the phase up (schema), starts ``processes`` worker processes, each
opening one driver per thread, and releases them all at one start instant. Every thread pulls
operations from the workload, times each call (the measuring wrapper), and stops at its share of
the operation count, the time limit, a stop request or a dead server. Each worker sends back an
exported Recorder; the parent merges them exactly and builds the ResultDocument.

Live progress (``PeriodProgress``): a publisher thread in each worker sends the intervals every
one of its threads has moved past (summed over threads, read without locks: the hot path never
touches a sealed interval again); the parent sums them into reporting periods and calls back.

Pacing (``target``): each thread owns ``target / threads`` of the rate and a fixed schedule; an
operation's latency runs from its scheduled start, so a stall in the server is charged to every
operation that should have been sent during it (no coordinated omission).

The modules, in the order a phase meets them:
``config`` (what crosses the process boundary), ``phase`` (the parent's steps: set up, lay out,
run, flag, finish), ``client_model`` (event loop or threads, how many processes), ``processes`` (the
parent's handle on the worker processes: start, release, collect), ``worker`` (one worker process),
``thread_loop`` (the per-operation hot loop of the thread model), ``periods`` (live progress by
reporting period) and ``document`` (the merged result document).
"""

from benchwright.runner.engine.config import ERROR_ABORT_S, ProgressFn
from benchwright.runner.engine.document import ensure_complete, host_facts
from benchwright.runner.engine.periods import Period, PeriodProgress, _PeriodTracker, _PeriodUpdate
from benchwright.runner.engine.phase import run_phase
from benchwright.runner.engine.processes import start_method
from benchwright.runner.engine.thread_loop import _thread_loop
from benchwright.runner.plan import PhaseConfig

__all__ = [
    "ERROR_ABORT_S",
    "Period",
    "PeriodProgress",
    "PhaseConfig",
    "ProgressFn",
    "_PeriodTracker",
    "_PeriodUpdate",
    "_thread_loop",
    "ensure_complete",
    "host_facts",
    "run_phase",
    "start_method",
]
