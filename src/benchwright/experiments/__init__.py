"""Experiments none of the benchmark tools runs on their own: events during the measured phase
(failover, reboot, scale), the target's availability through them, and the checks that go with
them. ``models`` holds the spec's sections (imported by benchwright.spec); the rest is imported
where it is used."""
