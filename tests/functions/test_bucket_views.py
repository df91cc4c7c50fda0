"""`--bucket s3://...` on the views: a suite's records written to the results bucket by the workflow's
own store (S3ResultStore, the StoreResults layout) on a moto server go through `table`, `show`,
`compare`, `history` and `report` read straight from the bucket, giving what the same records give
from a local store; the local cache means a second pass downloads nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.providers.aws.store import S3ResultStore
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from tests.functions.test_cloud_views import BUCKET, SUITE, bucket, suite_records  # noqa: F401

PLAIN_OLD, PLAIN_NEW = "20260101-000000-aaaaaa", "20260102-000000-aaaaaa"


@pytest.fixture
def gets(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every S3 GetObject the CLI makes, by key (counted on boto3's default session, which the CLI's
    ``boto3.client("s3")`` uses)."""
    import boto3

    session = boto3.session.Session()
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", session)
    seen: Counter[str] = Counter()

    def count(params: dict[str, Any], **_: Any) -> None:
        seen[params["Key"]] += 1

    session.events.register("provide-client-params.s3.GetObject", count)
    return seen


def views(store_args: list[str], tmp: Path) -> list[list[str]]:
    """Each view's command line, reading through ``store_args``."""
    return [
        [*argv, *store_args]
        for argv in (
            ["table", SUITE, "--rows", "spec,threads", "--metric", "throughput", "p99", "--format", "csv"],
            ["table", "exp-grid", "--format", "json"],
            ["table", "exp-plain~1", "--format", "csv"],
            ["show", "20260102-000100", "--json"],
            ["show", "exp-grid"],
            ["history", "exp-plain"],
            ["compare", PLAIN_OLD, PLAIN_NEW],
            ["report", PLAIN_NEW, "--out", str(tmp / "report.html")],
        )
    ]


def outputs(argvs: list[list[str]], capsys: pytest.CaptureFixture[str], report: Path) -> list[str]:
    out = []
    for argv in argvs:
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        out.append(capsys.readouterr().out)
        if argv[0] == "report":
            out.append(report.read_text())
    return out


def test_every_view_reads_the_bucket_as_it_reads_the_same_records_locally_and_caches_them(
    bucket: S3ResultStore,  # noqa: F811
    gets: Counter[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    written = [*suite_records(0), *suite_records(1, level=1500.0)]
    local = tmp_path / "local.sqlite"
    with SQLiteResultStore(local) as store:
        for record in written:
            bucket.save_run(record)  # what StoreResults does: the record, the history and suite indexes
            if record.suite_run_id is None:
                store.save_run(record)
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    report = tmp_path / "report.html"

    expected = outputs(views(["--store", str(local)], tmp_path), capsys, report)
    got = outputs(views(["--bucket", f"s3://{BUCKET}"], tmp_path), capsys, report)
    assert len(got) == len(expected) == 9
    for argv, mine, theirs in zip(views([], tmp_path), got, expected, strict=False):
        assert mine == theirs, argv  # byte for byte: show --json is the record field by field
    assert '"run_id": "20260102-000100-bbbbbb"' in got[3] and "threads=32" in got[4]
    assert PLAIN_OLD in got[5] and PLAIN_NEW in got[5]

    top = {f"runs/{r.run_id}/record.json" for r in written if r.suite_run_id is None}
    assert set(gets) == top and set(gets.values()) == {1}  # each record downloaded once, cells never
    cache = tmp_path / "cache" / f"s3-{BUCKET}.sqlite"
    with SQLiteResultStore(cache) as cached:
        assert {r[0] for r in cached.list_runs()} == {k.split("/")[1] for k in top}

    before = sum(gets.values())
    again = outputs(views(["--bucket", f"s3://{BUCKET}"], tmp_path), capsys, report)
    assert again == got
    assert sum(gets.values()) == before  # the cache: nothing downloaded a second time

    # a new night in the bucket: the spec's index is listed again, only the new run is downloaded
    for record in suite_records(2, level=1000.0):
        bucket.save_run(record)
    assert main(["history", "exp-plain", "--bucket", f"s3://{BUCKET}"]) == 0
    assert "20260103-000000-aaaaaa" in capsys.readouterr().out
    assert sum(gets.values()) == before + 1 and gets["runs/20260103-000000-aaaaaa/record.json"] == 1


def test_a_name_the_bucket_does_not_hold_is_a_named_error(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    for record in suite_records(0):
        bucket.save_run(record)
    assert main(["show", "nothing-here", "--bucket", f"s3://{BUCKET}"]) != 0
    err = capsys.readouterr().err
    assert f"s3://{BUCKET}: no run 'nothing-here'" in err and "history/nothing-here/" in err
    assert main(["table", "exp-plain", "--bucket", "bw-results"]) != 0
    assert "--bucket" in capsys.readouterr().err


def test_without_refs_the_cache_holds_every_specs_newest_runs(
    bucket: S3ResultStore,  # noqa: F811
    gets: Counter[str],
    tmp_path: Path,
) -> None:
    """What `site --bucket` asks for: every spec of the bucket, its newest ``limit`` runs, once."""
    from benchwright.bucket_cache import bucket_cache_store

    for night in range(3):
        for record in suite_records(night):
            bucket.save_run(record)
    path = bucket_cache_store(BUCKET, cache=tmp_path / "c.sqlite", limit=2)
    with SQLiteResultStore(path) as cached:
        assert cached.spec_names() == ["exp-grid", "exp-plain"]
        assert [r[0] for r in cached.list_runs("exp-plain")] == [
            "20260103-000000-aaaaaa",
            "20260102-000000-aaaaaa",
        ]
        assert [r[0] for r in cached.list_runs("exp-grid")] == [
            "20260103-000100-bbbbbb",
            "20260102-000100-bbbbbb",
        ]
    assert sum(gets.values()) == 4
    assert bucket_cache_store(BUCKET, cache=tmp_path / "c.sqlite", limit=2) == path
    assert sum(gets.values()) == 4  # cached: no record downloaded again
