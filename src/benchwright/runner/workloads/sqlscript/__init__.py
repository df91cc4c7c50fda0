"""SQL script workload ("sql") and the helpers every SQL workload shares (sqlkit)."""

from benchwright.runner.workloads.sqlscript.workload import SqlScriptWorkload

__all__ = ["SqlScriptWorkload"]
