"""Built-in workloads. Importing this package registers each of them (see base.register)."""

from benchwright.runner.workloads import ycsb  # noqa: F401
from benchwright.runner.workloads import redisbench  # noqa: F401
from benchwright.runner.workloads import tpcc  # noqa: F401
from benchwright.runner.workloads import tpcb  # noqa: F401
from benchwright.runner.workloads import oltp  # noqa: F401
from benchwright.runner.workloads import sqlscript  # noqa: F401
