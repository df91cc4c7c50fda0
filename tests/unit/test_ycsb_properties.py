"""Property files as YCSB writes them; errors that name the key, file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.errors import PropertyFileError, SpecError
from benchwright.runner.workloads.ycsb.properties import (
    PACKAGED,
    core_settings,
    load_properties,
    unknown_keys,
)


@pytest.mark.parametrize("name", PACKAGED)
def test_packaged_workloads_load_by_name_and_validate(name: str) -> None:
    props = load_properties([name], {})
    settings = core_settings(props)
    assert settings.recordcount == 1000
    assert unknown_keys(props) == []


def test_packaged_mixes_are_the_published_ones() -> None:
    a = core_settings(load_properties(["workloada"], {}))
    assert (a.readproportion, a.updateproportion, a.requestdistribution) == (0.5, 0.5, "zipfian")
    d = core_settings(load_properties(["workloadd"], {}))
    assert (d.insertproportion, d.requestdistribution) == (0.05, "latest")
    e = core_settings(load_properties(["workloade"], {}))
    assert (e.scanproportion, e.maxscanlength) == (0.95, 100)
    f = core_settings(load_properties(["workloadf"], {}))
    assert f.readmodifywriteproportion == 0.5


def test_overrides_win_over_files(tmp_path: Path) -> None:
    path = tmp_path / "mine.properties"
    path.write_text("# comment\nrecordcount = 50\n! also a comment\noperationcount: 7\n")
    props = load_properties(["workloadc", str(path)], {"operationcount": "9"})
    settings = core_settings(props)
    assert (settings.recordcount, settings.operationcount) == (50, 9)


def test_malformed_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.properties"
    path.write_text("recordcount=10\nthis line has no separator\n")
    with pytest.raises(PropertyFileError) as err:
        load_properties([str(path)], {})
    assert err.value.line == 2 and str(path) in str(err.value)


def test_missing_file_is_named() -> None:
    with pytest.raises(PropertyFileError, match="workloadz"):
        load_properties(["workloadz"], {})


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"readproportion": "0.5", "updateproportion": "0.4"}, "readproportion"),
        ({"recordcount": "-5"}, "recordcount"),
        ({"operationcount": "many"}, "operationcount"),
        ({"requestdistribution": "gaussian"}, "requestdistribution"),
        ({"fieldlengthdistribution": "histogram"}, "fieldlengthdistribution"),
        ({"readallfields": "maybe"}, "readallfields"),
        ({"minscanlength": "10", "maxscanlength": "5"}, "minscanlength"),
    ],
    ids=[
        "proportions-not-1",
        "negative-count",
        "not-a-number",
        "unknown-distribution",
        "unsupported-length-distribution",
        "not-a-boolean",
        "scan-bounds",
    ],
)
def test_invalid_values_name_the_key(overrides: dict[str, str], key: str) -> None:
    props = load_properties(["workloadb"], overrides)
    with pytest.raises(SpecError) as err:
        core_settings(props)
    assert err.value.field == key


def test_unknown_property_is_reported_not_fatal() -> None:
    """A key no known one is close to (a binding's) is kept and reported; a near miss of a known
    key is refused below."""
    props = load_properties(
        ["workloada"], {"hbase.columnfamily": "10", "postgres.url": "x", "db": "site.ycsb.BasicDB"}
    )
    assert unknown_keys(props) == ["hbase.columnfamily"]
    core_settings(props)


@pytest.mark.parametrize(
    ("key", "meant"),
    [("recordcnt", "recordcount"), ("operationcnt", "operationcount"), ("readproprtion", "readproportion")],
)
def test_a_misspelt_property_is_refused_saying_which_was_meant(key: str, meant: str) -> None:
    with pytest.raises(SpecError) as err:
        core_settings({key: "100000"})
    assert err.value.field == key and f"did you mean {meant}?" in err.value.detail


def test_a_binding_s_property_is_a_warning_not_an_error() -> None:
    from benchwright.runner.workloads.ycsb.properties import unknown_key_warning

    core_settings({"mongodb.url": "mongodb://x", "cassandra.hosts": "h"})  # accepted, as YCSB does
    assert unknown_key_warning("mongodb.url") == "unknown property 'mongodb.url' is ignored"


def test_the_cli_refuses_a_misspelt_property_before_running(capsys: pytest.CaptureFixture[str]) -> None:
    from benchwright.cli import main

    assert main(["ycsb", "load", "null", "-P", "workloada", "-p", "recordcnt=100"]) == 2
    assert "recordcnt: unknown property: did you mean recordcount?" in capsys.readouterr().err
