"""A cloud run's records in every view: written to the results bucket by the workflow's own store
(S3ResultStore) on a moto server, pulled over HTTP with `benchwright pull`, then read by `table`,
`show`, `compare` and `history`; and a rehearsal's records.json read directly.

The records are a suite of two benchmarks as the API starts them: one plain run, and one matrix run
whose suite record holds its cells (each cell also has its own record, as on AWS).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.commands.show import runs_from_ref
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.s3 import S3Artifacts
from benchwright.providers.aws.store import S3ResultStore
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.runs import RunRecord
from tests.conftest import FAKE_AWS_ENV

BUCKET = "bw-results"
SUITE = "exp-cloud"


def suite_records(night: int = 0, level: float = 2000.0) -> list[RunRecord]:
    """One night of suite SUITE: a plain run of ``exp-plain``; a matrix run of ``exp-grid`` (its suite
    record and its two cell records)."""
    day = EPOCH + timedelta(days=night)
    plain = make_run("exp-plain", f"2026010{night + 1}-000000-aaaaaa",
                     [("clients=8", {"clients": 8}, noisy_series(level, 30, seed=night))],
                     started_at=day, seed=night)  # fmt: skip
    cells = [
        (f"threads={t}", {"threads": t}, noisy_series(level * t / 16, 30, seed=night + t)) for t in (16, 32)
    ]
    grid = make_run("exp-grid", f"2026010{night + 1}-000100-bbbbbb", cells, started_at=day, seed=night)
    cell_records = [
        RunRecord(
            run_id=f"{grid.run_id}-c{i}",
            spec_name="exp-grid",
            started_at=day,
            status="succeeded",
            cells=[cell],
            suite_run_id=grid.run_id,
        )
        for i, cell in enumerate(grid.cells)
    ]
    for run in (plain, grid, *cell_records):
        run.tags["suite"] = SUITE
    return [plain, grid, *cell_records]


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3ResultStore]:
    """A results bucket on a moto server (HTTP on 127.0.0.1): the CLI reaches it as it would reach S3,
    through botocore and ``AWS_ENDPOINT_URL``."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for key, value in FAKE_AWS_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://{host}:{port}")
    monkeypatch.delenv("BENCHWRIGHT_BUCKET", raising=False)
    try:
        import boto3

        boto3.client("s3").create_bucket(Bucket=BUCKET)
        settings = AwsSettings(results_bucket=BUCKET)
        yield S3ResultStore(S3Artifacts(Clients(settings, boto3.session.Session()), BUCKET))
    finally:
        import urllib.request

        # moto's state is per process, not per server: the next test starts from an empty bucket
        urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST"))
        server.stop()


def test_pull_by_suite_name_stores_every_benchmark_and_every_view_reads_them(
    bucket: S3ResultStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = [*suite_records(0), *suite_records(1, level=1500.0)]
    for record in written:
        bucket.save_run(record)
    store = tmp_path / "cache.sqlite"
    assert main(["pull", "--spec", SUITE, "--bucket", f"s3://{BUCKET}", "--store", str(store)]) == 0
    assert "4 run(s) stored" in capsys.readouterr().out
    with SQLiteResultStore(store) as local:
        stored = {r[0] for r in local.list_runs()}
        # the suite records, never their cells: the grid's cells are inside its suite record
        assert stored == {r.run_id for r in written if r.suite_run_id is None}
        for record in written:
            if record.suite_run_id is None:
                got = local.get_run(record.run_id)
                assert got is not None and got.model_dump() == record.model_dump()  # field by field

    # table SUITE: the newest run of each benchmark, as the AWS examples' comments say
    args = ["--store", str(store)]
    assert (
        main(["table", SUITE, "--rows", "spec,threads", "--metric", "throughput", "--format", "csv", *args])
        == 0
    )
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    specs = sorted({r[0] for r in rows[1:]})
    assert specs == ["exp-grid", "exp-plain"]
    newest = next(r for r in written if r.run_id == "20260102-000000-aaaaaa").cells[0].measured
    assert newest is not None
    plain = {r[2]: float(r[3]) for r in rows[1:] if r[0] == "exp-plain"}
    assert plain == {op: pytest.approx(s.throughput, rel=1e-3) for op, s in newest.operations.items()}

    # a spec's name: its newest run (exp3's and exp4's comments name their spec)
    assert (
        main(["table", "exp-grid", "--rows", "threads", "--metric", "throughput", "--format", "csv", *args])
        == 0
    )
    grid = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert {r[0] for r in grid[1:]} == {"16", "32"}
    assert main(["show", "20260102-000100", *args]) == 0
    out = capsys.readouterr().out
    assert "threads=16" in out and "threads=32" in out
    assert main(["history", "exp-plain", *args]) == 0
    out = capsys.readouterr().out
    assert "20260102-000000-aaaaaa" in out and "20260101-000000-aaaaaa" in out
    assert main(["compare", "20260101-000000-aaaaaa", "20260102-000000-aaaaaa", *args]) == 0
    assert "-2" in capsys.readouterr().out  # 2,000 -> 1,500 ops/s


def test_pull_a_cell_id_stores_its_suite_and_names_what_is_missing(
    bucket: S3ResultStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for record in suite_records(0):
        bucket.save_run(record)
    store = tmp_path / "cache.sqlite"
    base = ["--bucket", f"s3://{BUCKET}", "--store", str(store)]
    assert main(["pull", "20260101-000100-bbbbbb-c1", *base]) == 0
    captured = capsys.readouterr()
    assert "cell of suite run 20260101-000100-bbbbbb" in captured.err
    with SQLiteResultStore(store) as local:
        assert [r[0] for r in local.list_runs()] == ["20260101-000100-bbbbbb"]
    assert main(["pull", "20990101-000000-ffffff", *base]) != 0
    assert f"s3://{BUCKET}/runs/20990101-000000-ffffff/record.json: no such record" in capsys.readouterr().err
    assert main(["pull", "--spec", "nothing-here", *base]) != 0
    assert "history/nothing-here/" in capsys.readouterr().err
    assert main(["pull", "x", "--bucket", "bw-results", "--store", str(store)]) != 0
    assert "--bucket" in capsys.readouterr().err


def test_pull_by_spec_name_takes_the_newest_runs(
    bucket: S3ResultStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for night in range(3):
        for record in suite_records(night):
            bucket.save_run(record)
    store = tmp_path / "cache.sqlite"
    assert (
        main(
            [
                "pull",
                "--spec",
                "exp-plain",
                "--limit",
                "2",
                "--bucket",
                f"s3://{BUCKET}",
                "--store",
                str(store),
            ]
        )
        == 0
    )
    with SQLiteResultStore(store) as local:
        assert [r[0] for r in local.list_runs()] == ["20260103-000000-aaaaaa", "20260102-000000-aaaaaa"]


def test_a_rehearsals_records_json_is_read_by_every_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "rehearsal"
    out_dir.mkdir()
    records = [*suite_records(0), *suite_records(1, level=1500.0)]
    (out_dir / "records.json").write_text(json.dumps([r.model_dump(mode="json") for r in records]))
    path = str(out_dir / "records.json")

    in_file = runs_from_ref(str(out_dir))
    assert in_file is not None  # the suite-level runs; cell records are inside their suite's record
    assert [r.run_id for r in in_file] == [r.run_id for r in records if r.suite_run_id is None]
    assert main(["table", str(out_dir), "--rows", "spec", "--metric", "throughput", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert {r[0] for r in rows[1:]} == {"exp-plain", "exp-grid"}
    assert main(["table", SUITE, "--store", str(out_dir), "--metric", "throughput"]) == 0
    assert "threads" in capsys.readouterr().out
    assert main(["show", f"{path}#20260101-000100"]) == 0
    assert "threads=32" in capsys.readouterr().out
    assert main(["show", path]) != 0  # several runs: which one?
    assert "#RUN_ID" in capsys.readouterr().err
    assert main(["history", "exp-grid", "--store", path]) == 0
    out = capsys.readouterr().out
    assert "20260101-000100-bbbbbb" in out and "20260102-000100-bbbbbb" in out
    assert main(["compare", f"{path}#20260101-000000-aaaaaa", f"{path}#20260102-000000-aaaaaa"]) == 0
    assert "-2" in capsys.readouterr().out

    store = tmp_path / "s.sqlite"
    assert main(["pull", "--records", str(out_dir), "--store", str(store)]) == 0
    with SQLiteResultStore(store) as local:
        assert len(local.list_runs()) == 4


def test_a_list_with_a_broken_record_names_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "records.json"
    good = suite_records(0)[0].model_dump(mode="json")
    path.write_text(json.dumps([good, {"run_id": "x"}]))
    assert main(["table", str(path)]) != 0
    assert "item 1 is not a run record" in capsys.readouterr().err
