"""The saturation guard, at the runner's level: a result says when the runner, not the server, limited
the run. Against the null driver (no server at all) nothing but the runner can limit a run, and the
result must say so however busy the host is (CPU the worker got, or waited for); against a server
that answers every request after a known delay the runner idles, and the result must not blame the
runner's CPU (only a starved host's timer lag can flag it there)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.engine.document import SATURATION_LAG_MS
from tests.runner.conftest import delay_server_at


def ycsb_run(engine: str, props: dict[str, str], seconds: float) -> ResultDocument:
    props = {"operationcount": "0", "recordcount": "1000", "fieldcount": "1", **props}
    config = PhaseConfig("ycsb", "run", engine, props, threads=2, processes=1, max_seconds=seconds, seed=3)
    return run_phase(config)


@pytest.fixture
def delay_server() -> Iterator[int]:
    """A RESP server of this test's own that answers every GET 20 ms after it arrived."""
    with delay_server_at(20) as port:
        yield port


def test_a_run_only_the_runner_limited_is_flagged_saturated() -> None:
    doc = ycsb_run("null", {"readproportion": "1", "updateproportion": "0"}, 2.0)
    client = doc.client
    assert doc.operations["READ"].operations > 1000
    assert client.saturated, client
    assert client.max_process_cpu_share + client.max_process_cpu_wait_share >= 0.9, client
    flags = [f for f in doc.validity if f.code == "client_saturated"]
    assert len(flags) == 1 and "the runner itself was near its limit" in flags[0].message


@pytest.mark.servers
def test_a_run_the_server_limited_is_not(delay_server: int) -> None:
    props = {"redis.port": str(delay_server), "redis.datatype": "string", "readproportion": "1"}
    doc = ycsb_run("redis", {**props, "updateproportion": "0"}, 2.0)
    client = doc.client
    read = doc.operations["READ"]
    assert read.statuses == {"OK": read.operations} and read.operations >= 100
    assert read.p50_us >= 20_000  # the server's delay set the pace
    # the runner idled: its busiest process got and waited for a small share of a core
    assert client.max_process_cpu_share + client.max_process_cpu_wait_share < 0.5, client
    # so only a starved host can still flag it, by the timer lag it measured (CI runs this beside
    # other tiers at a load of 20 on 2 cores, where a 50 ms sleep wakes 100 ms late): the flag then
    # says the host, not the server, delayed the runner, and otherwise no flag at all
    starved = client.schedule_lag_p99_ms >= SATURATION_LAG_MS
    assert client.saturated == starved, client
    flags = [f for f in doc.validity if f.code == "client_saturated"]
    assert len(flags) == starved and all("timer lag p99" in f.message for f in flags), flags
