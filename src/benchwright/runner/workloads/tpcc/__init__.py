"""TPC-C (workload "tpcc"): importing the package registers the workload."""

from benchwright.runner.workloads.tpcc.workload import TpccWorkload

__all__ = ["TpccWorkload"]
