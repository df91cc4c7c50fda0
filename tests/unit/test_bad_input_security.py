"""Issue 14, items 1-4: workload files, secrets in specs, paths from user values, settings injection.

Each test feeds the input the review reproduced and asserts it is refused (naming the field) or made
harmless; none of these inputs was refused before.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.errors import SpecError
from benchwright.results import redact, redact_text
from benchwright.spec import load_spec, parse_spec, workload_properties
from benchwright.specguard import path_component

BASE: dict[str, Any] = {
    "name": "t",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "ycsb", "files": ["workloada"], "properties": {"recordcount": 100}},
}


def spec(**workload: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["workload"].update(workload)
    return data


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------- 1. workload files
@pytest.mark.parametrize(
    "entry", ["/proc/self/environ", "/etc/hostname", "/dev/zero", "../outside.properties"]
)
def test_workload_files_outside_the_spec_directory_are_refused(tmp_path: Path, entry: str) -> None:
    (tmp_path / "outside.properties").write_text("recordcount=5\n")
    sub = tmp_path / "specs"
    sub.mkdir()
    path = write(
        sub / "s.yaml",
        f"name: t\ntarget: {{provider: local, engine: redis}}\n"
        f"workload: {{name: ycsb, files: ['{entry}']}}\n",
    )
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.field == "workload.files[0]"
    assert "outside" in err.value.detail


def test_a_file_under_the_spec_directory_is_inlined_and_read_nowhere_later(tmp_path: Path) -> None:
    write(tmp_path / "mine.properties", "recordcount=7\nreadproportion=0.9\nupdateproportion=0.1\n")
    path = write(
        tmp_path / "s.yaml",
        "name: t\ntarget: {provider: local, engine: redis}\n"
        "workload: {name: ycsb, files: [workloada, mine.properties], properties: {recordcount: 9}}\n",
    )
    loaded = load_spec(path)
    assert loaded.workload.files == ["workloada"]  # the packaged head stays a name
    props = workload_properties(loaded)
    assert props["recordcount"] == "9" and props["readproportion"] == "0.9"  # properties win over files
    (tmp_path / "mine.properties").unlink()
    assert workload_properties(loaded)["readproportion"] == "0.9"  # nothing is read after loading


def test_files_root_names_another_directory(tmp_path: Path) -> None:
    other = tmp_path / "props"
    other.mkdir()
    write(other / "p.properties", "recordcount=3\n")
    path = write(
        tmp_path / "s.yaml",
        "name: t\ntarget: {provider: local, engine: redis}\n"
        "workload: {name: ycsb, files: [workloada, p.properties]}\n",
    )
    with pytest.raises(SpecError):
        load_spec(path)
    assert workload_properties(load_spec(path, files_root=other))["recordcount"] == "3"


def test_a_spec_given_as_data_names_only_packaged_workloads() -> None:
    """The API and a stored spec have no directory: no path is ever read for them."""
    with pytest.raises(SpecError) as err:
        parse_spec(spec(files=["/etc/hostname"]))
    assert err.value.field == "workload.files[0]"
    assert os.uname().nodename not in str(err.value)


def test_a_special_file_or_a_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.properties")  # opening it for reading would wait for a writer
    os.symlink("/dev/zero", tmp_path / "zero.properties")
    write(tmp_path / "big.properties", "x=" + "y" * (300 * 1024) + "\n")
    cases = (
        ("fifo.properties", "regular file"),
        ("zero.properties", "outside"),
        ("big.properties", "larger than"),
    )
    for name, words in cases:
        path = write(
            tmp_path / "s.yaml",
            "name: t\ntarget: {provider: local, engine: redis}\n"
            f"workload: {{name: ycsb, files: [{name}]}}\n",
        )
        with pytest.raises(SpecError, match=words):
            load_spec(path)


def test_a_bad_line_in_a_property_file_is_named_not_echoed(tmp_path: Path) -> None:
    write(tmp_path / "p.properties", "recordcount=1\nSECRET-CONTENT-LINE\n")
    path = write(
        tmp_path / "s.yaml",
        "name: t\ntarget: {provider: local, engine: redis}\nworkload: {name: ycsb, files: [p.properties]}\n",
    )
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert "p.properties:2" in str(err.value)
    assert "SECRET-CONTENT" not in str(err.value)


# ---------------------------------------------------------------- 2. secrets
@pytest.mark.parametrize(
    ("data", "field"),
    [
        (spec(properties={"postgres.password": "hunter2"}), "workload.properties.postgres.password"),
        (spec(properties={"redis.password": "hunter2"}), "workload.properties.redis.password"),
        (
            spec(properties={"postgres.url": "postgresql://u:hunter2@db:5432/x"}),
            "workload.properties.postgres.url",
        ),
        (
            {**BASE, "target": {"provider": "local", "engine": "redis", "settings": {"requirepass": "x"}}},
            "target.settings.requirepass",
        ),
        (
            {**BASE, "matrix": {"workload.properties.redis.password": ["a", "b"]}},
            "matrix.workload.properties.redis.password",
        ),
    ],
)
def test_a_password_written_in_the_spec_is_refused_naming_the_field_and_the_way(
    data: Any, field: str
) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    assert err.value.field == field
    assert "password_env" in err.value.detail
    assert "hunter2" not in str(err.value)


def test_an_empty_password_property_and_a_reference_are_fine() -> None:
    parse_spec(spec(properties={"db.passwd": ""}))
    parse_spec(
        {
            **BASE,
            "target": {"provider": "endpoint", "engine": "redis", "hosts": ["h:1"], "password_env": "MY_PW"},
        }
    )


@pytest.mark.parametrize(
    "text",
    [
        "host=db port=5432 password=hunter2 dbname=x",
        "host=db password='hun ter2' user=u",
        "postgress://u:hunter2@db/x",  # a mistyped scheme
        '{"password": "hunter2"}',
    ],
)
def test_redaction_covers_urls_dsns_and_json(text: str) -> None:
    assert "hunter2" not in redact_text(text) and "ter2" not in redact_text(text)
    assert "hunter2" not in str(redact({"postgres.url": text}))


def test_a_cli_error_never_echoes_a_password(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write(tmp_path / "s.sql", "SELECT 1;\n")
    url = "postgres://u:hunter2@127.0.0.1:1/x"  # refused port: the connection error names the URL
    code = main(["sql", "postgres", "-f", str(script), "--url", url, "-T", "1"])
    out = capsys.readouterr()
    assert code != 0
    assert "hunter2" not in out.err + out.out


@pytest.mark.servers
def test_a_libpq_dsn_given_to_a_json_run_is_stored_redacted(tmp_path: Path) -> None:
    from tests.conftest import PG_PORT

    script = write(tmp_path / "s.sql", "SELECT 1;\n")
    dsn = f"host=127.0.0.1 port={PG_PORT} user=bench password=bench dbname=bench"
    out = tmp_path / "r.json"
    assert main(["sql", "postgres", "-f", str(script), "--url", dsn, "-T", "1", "--json", str(out)]) == 0
    text = out.read_text()
    assert "password=***" in text and "password=bench" not in text


# ---------------------------------------------------------------- 3. paths from user values
@pytest.mark.parametrize("value", ["../../../tmp/x", "/etc/passwd", "..", "a/b", "x\ny", "." * 300])
def test_a_user_value_becomes_one_safe_path_component(value: str) -> None:
    safe = path_component(f"x={value}")
    assert "/" not in safe and "\n" not in safe and not safe.startswith(".") and len(safe) <= 120
    if "/" in value:  # sanitised ids keep a digest: a/b and a_b do not share a directory
        assert path_component(f"x={value}") != path_component("x=" + value.replace("/", "_"))
    assert path_component(value) not in (".", "..", "")


# a valid spec for run states whose spec plays no part (RunState.spec is the validated model)
SMALL_SPEC = {"name": "t", "target": {"provider": "local", "engine": "redis"}, "workload": {"name": "ycsb"}}


def test_a_matrix_value_cannot_write_outside_out(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from benchwright.providers.local import DirectoryArtifacts
    from benchwright.stages import RunState
    from benchwright.stages.steps import _cell_key

    out = tmp_path / "out"
    artifacts = DirectoryArtifacts(out)
    state = RunState(run_id="r", spec_name="t", cell_id="x=../../../tmp/x", repeat=0, spec=SMALL_SPEC)
    key = _cell_key(state, SimpleNamespace(artifacts=artifacts))
    pointer = Path(artifacts.put_json(f"{key}/cell.json", {}))
    assert pointer.resolve().is_relative_to(out.resolve())
    with pytest.raises(ValueError):
        artifacts.put_json("../escape.json", {})


def test_cell_artifacts_in_a_shared_bucket_carry_the_run_id() -> None:
    """Item 8: S3 keys were default/repeat-0/cell.json for every run; a retried or overlapping
    execution stored another run's numbers."""
    from types import SimpleNamespace

    from benchwright.providers.aws.s3 import S3Artifacts
    from benchwright.stages import RunState
    from benchwright.stages.steps import _cell_key

    s3 = SimpleNamespace(artifacts=S3Artifacts(None, "bucket"))
    keys = {
        _cell_key(RunState(run_id=run, spec_name="t", cell_id="default", repeat=0, spec=SMALL_SPEC), s3)
        for run in ("run-a", "run-b")
    }
    assert keys == {"runs/run-a/cells/default/repeat-0", "runs/run-b/cells/default/repeat-0"}


# ---------------------------------------------------------------- 4. settings injection
@pytest.mark.parametrize(
    ("engine", "settings", "word"),
    [
        ("redis", {"maxmemory": "1gb\nbind 0.0.0.0\nprotected-mode no"}, "one line"),
        ("postgres", {"work_mem": "4MB'\nlisten_addresses = '*"}, "one line"),
        ("mysql", {"max_connections": "100\nbind-address = 0.0.0.0"}, "one line"),
        ("redis", {"bind": "0.0.0.0"}, "allow-list"),
        ("postgres", {"listen_addresses": "*"}, "allow-list"),
        ("mysql", {"bind-address": "0.0.0.0"}, "allow-list"),
        ("postgres", {"archive_command": "curl evil"}, "allow-list"),
    ],
)
def test_a_setting_cannot_inject_a_config_directive(engine: str, settings: dict[str, str], word: str) -> None:
    data = {
        "name": "t",
        "target": {"provider": "local", "engine": engine, "settings": settings},
        "workload": {
            "name": "sql" if engine != "redis" else "redis-bench",
            "properties": {"sql.script": "SELECT 1"} if engine != "redis" else {},
        },
    }
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    assert err.value.field.startswith("target.settings")
    assert word in err.value.detail


def test_a_failed_operation_probe_is_kept_on_one_line_redacted_and_cut() -> None:
    """What an operation's timeout will name: the error type, the driver's message without the
    password a DSN in it carried, and the address probed."""
    from benchwright.providers.base import LAST_PROBE_ERROR, last_probe_error, probe_or_none

    def probe() -> int:
        raise ConnectionError("invalid dsn: host=db password=hunter2-secret\n\tsee the docs " + "x" * 500)

    progress: dict[str, Any] = {}
    assert last_probe_error(progress) == ""
    assert probe_or_none(progress, probe, "db.example:5432") is None
    said = progress[LAST_PROBE_ERROR]
    assert said.startswith("ConnectionError: invalid dsn: host=db password=*** see the docs xxx"), said
    assert said.endswith("... (db.example:5432)") and len(said) < 400, said
    assert "hunter2" not in said and "\n" not in said
    assert last_probe_error(progress) == f"; last probe error: {said}"
    assert probe_or_none(progress, lambda: 7, "db.example:5432") == 7
