"""pgbench's scripts (custom -f files and the built-ins) on Benchwright's statement executor."""

from benchwright.runner.workloads.pgscript import workload  # noqa: F401 - registers the workload
