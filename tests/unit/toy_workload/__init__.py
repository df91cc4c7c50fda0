"""A toy workload kept outside the package: one folder (this one) and one registry line (the test's
``register(KvScanWorkload)``) make it a workload every part of Benchwright knows."""
