"""pgbench's scripts (custom -f files and the built-ins) on Benchwright's statement executor; the
workload registers from runner/workloads/__init__.py (importing only ``workload`` keeps the script
reader and the expressions out of the registry's import circle)."""
