"""OLTP with sysbench's semantics (workload "oltp"): importing the package registers the workload."""

from benchwright.runner.workloads.oltp.workload import OltpWorkload

__all__ = ["OltpWorkload"]
