"""SQL script workload ("sql") and the helpers every SQL workload shares (sqlkit)."""
