"""Issue 27: every document the runner writes carries the fingerprint of what it was measured on,
and the measured phase ("run") a network floor, against the real local servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.results import ResultDocument
from benchwright.runner.drivers import new_driver
from benchwright.runner.main import main
from benchwright.runner.plan import PhaseConfig, PlanContext, RunnerPlan
from benchwright.runner.workloads.ycsb.properties import load_properties
from benchwright.runner_output import RunnerOutput

pytestmark = pytest.mark.servers
RECORDS, OPERATIONS = 200, 600
CONTEXT = PlanContext(spec_digest="0123456789ab", storage="local disk")


def _reported_version(engine: str, conn: dict[str, str]) -> str:
    """The version the server reports, asked over a connection of our own."""
    driver = new_driver(engine, conn)
    driver.connect()
    try:
        version = driver.server_version()
    finally:
        driver.close()
    assert version
    return version


def _run_plan(tmp_path: Path, engine: str, conn: dict[str, str]) -> RunnerOutput:
    props = load_properties(
        ["workloada"], {"recordcount": str(RECORDS), "operationcount": str(OPERATIONS), **conn}
    )
    phases = [
        PhaseConfig(
            workload="ycsb", phase=name, engine=engine, properties=props, threads=2, processes=1, seed=7
        )
        for name in ("load", "run")
    ]
    plan = RunnerPlan(run_id="fp-test", cell_id="c0", phases=phases, context=CONTEXT)
    plan_file, out = tmp_path / "plan.json", tmp_path / "out.json"
    plan_file.write_text(plan.model_dump_json())
    assert main(["--plan", str(plan_file), "--out", str(out), "--quiet"]) == 0
    return RunnerOutput.parse(out.read_text())


def _check(output: RunnerOutput, engine: str, version: str, command: str, marker: str) -> None:
    load, run = output.documents
    assert (load.phase, run.phase) == ("load", "run")
    for doc in (load, run):
        fp = doc.fingerprint
        assert fp is not None
        assert fp.engine_version == version and marker in version  # the server's own words
        assert (fp.runner_class, fp.runner_platform, fp.instance_type) == ("local", "local", None)
        assert fp.cpu_count >= 1 and fp.cpu_model and fp.kernel
        assert fp.storage == "local disk" and fp.spec_digest == CONTEXT.spec_digest
        assert fp.target_class is None and fp.target_az is None
    assert load.fingerprint.key() == run.fingerprint.key()  # type: ignore[union-attr]
    assert load.network_floor is None  # the floor is taken before the measured phase only
    floor = run.network_floor
    assert floor is not None
    assert floor.command == command and floor.round_trips == 200
    assert 0 < floor.p50_us <= floor.p99_us <= floor.max_us
    # a round trip on loopback is well under the phase's own p50 plus a millisecond
    assert floor.p50_us < run.operations["READ"].p50_us + 1000


def test_postgres_run_has_fingerprint_and_floor(tmp_path: Path, pg_url: str) -> None:
    conn = {"postgres.url": pg_url}
    _check(
        _run_plan(tmp_path, "postgres", conn),
        "postgres",
        _reported_version("postgres", conn),
        "SELECT 1",
        "PostgreSQL",
    )


def test_mariadb_run_has_fingerprint_and_floor(tmp_path: Path, mysql_url: str) -> None:
    conn = {"mysql.url": mysql_url}
    _check(
        _run_plan(tmp_path, "mysql", conn), "mysql", _reported_version("mysql", conn), "SELECT 1", "MariaDB"
    )


def test_redis_run_has_fingerprint_and_floor(tmp_path: Path, redis_props: dict[str, str]) -> None:
    _check(
        _run_plan(tmp_path, "redis", redis_props),
        "redis",
        _reported_version("redis", redis_props),
        "PING",
        "redis_version:",
    )


def test_the_ycsb_command_stamps_its_document_too(tmp_path: Path, redis_props: dict[str, str]) -> None:
    """`benchwright ycsb run` (no spec, no plan): this machine's fingerprint and a floor all the same."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    props = [
        x
        for k, v in {**redis_props, "recordcount": "100", "operationcount": "300"}.items()
        for x in ("-p", f"{k}={v}")
    ]
    for phase in ("load", "run"):
        out = tmp_path / f"{phase}.json"
        args = [
            sys.executable,
            "-m",
            "benchwright.cli",
            "ycsb",
            phase,
            "redis",
            "-P",
            "workloadc",
            *props,
            "--json",
            str(out),
        ]
        done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    load, run = (ResultDocument.read(tmp_path / f"{p}.json") for p in ("load", "run"))
    assert run.fingerprint is not None and run.fingerprint.engine_version == run.server_version
    assert (
        run.fingerprint.runner_class == "local" and run.fingerprint.storage is None
    )  # an endpoint's disk is unknown
    assert run.network_floor is not None and run.network_floor.round_trips == 200
    assert load.network_floor is None and load.fingerprint is not None
