"""Built-in workloads. Importing this package registers each of them (see base.register)."""

from benchwright.runner.workloads import ycsb  # noqa: F401
from benchwright.runner.workloads import redisbench  # noqa: F401
from benchwright.runner.workloads import tpcc  # noqa: F401
