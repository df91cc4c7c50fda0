"""redis-benchmark's tests as a native workload; importing registers "redis-bench"."""

from benchwright.runner.workloads.redisbench import workload  # noqa: F401
