"""The synthesized stack with every optional part on, shared by every infra test module (a synth costs
10-25 s here; tests/infra/synth_cache.py makes it once per change of its inputs): the nightly schedule, API admins and the InfluxDB sink (opt-in; the default is none)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.test_stack import SUITE, _with_node, synth

ADMINS = ["bench-admin", "arn:aws:iam::123456789012:role/perf-lead"]
API_LIMITS = {
    "endpoint_cidrs": ["10.20.0.0/16"],
    "instance_types": ["db.t4g.*", "cache.t4g.*"],
    "max_runs_per_day": 7,
}


@pytest.fixture(scope="session")
def stack() -> dict[str, Any]:
    _with_node()
    return synth(
        {
            "schedule": {"suite": [SUITE], "cron": "cron(30 3 * * ? *)", "timezone": "Europe/Berlin"},
            "api_admins": ADMINS,
            "api": API_LIMITS,
            "sink": {"kind": "influxdb"},
        }
    )
