"""TPC-B, pgbench-compatible (workload "tpcb"): importing the package registers the workload."""

from benchwright.runner.workloads.tpcb.workload import TpcbWorkload

__all__ = ["TpcbWorkload"]
