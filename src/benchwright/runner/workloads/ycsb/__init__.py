"""YCSB core workload: property files, generators, the workload (registered as "ycsb")."""

from benchwright.runner.workloads.ycsb.workload import YcsbWorkload

__all__ = ["YcsbWorkload"]
