"""The load generator: workloads, drivers, the measuring engine. This is what runs in the container."""
