"""Built-in workloads. Importing this package registers each of them (see base.register)."""

from benchwright.runner.workloads import (
    oltp,  # noqa: F401
    redisbench,  # noqa: F401
    sqlscript,  # noqa: F401
    tpcb,  # noqa: F401
    tpcc,  # noqa: F401
    ycsb,  # noqa: F401
)
from benchwright.runner.workloads.pgscript import workload as pgscript  # noqa: F401
