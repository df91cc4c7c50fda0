"""Validation never needs a client library: the Lambda asset has no mysqlclient (no manylinux wheel),
and the API and ValidateSpec must still accept a good MySQL spec and name a bad property."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.errors import SpecError
from benchwright.runner.drivers import CAPABILITIES, DRIVERS, capabilities, check_settings, driver_class

ROOT = Path(__file__).resolve().parents[2]


def test_the_capability_table_matches_every_drivers_own() -> None:
    assert set(CAPABILITIES) == set(DRIVERS)
    for engine in DRIVERS:
        assert capabilities(engine) == driver_class(engine).capabilities, engine


def test_unknown_engine_is_named() -> None:
    with pytest.raises(SpecError, match="unknown engine 'oracle'") as caught:
        capabilities("oracle")
    assert caught.value.field == "engine"


@pytest.mark.parametrize(
    ("props", "field"),
    [
        ({}, "mysql.url"),
        ({"mysql.url": "postgres://h/db"}, "mysql.url"),
        ({"mysql.url": "mysql://u@h:1/"}, "mysql.url"),
        ({"mysql.url": "mysql://u@h:1/db", "mysql.timeout": "soon"}, "mysql.timeout"),
        ({"mysql.url": "mysql://u@h:1/db", "client.op_timeout_s": "x"}, "client.op_timeout_s"),
    ],
)
def test_mysql_settings_name_the_bad_property(props: dict[str, str], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        check_settings("mysql", props)
    assert caught.value.field == field


# MySQLdb made unimportable, as in the Lambda asset; a good spec validates, a bad property is named
# by its field, and MySQLdb was never imported.
_NO_MYSQLDB = """
import sys
sys.modules["MySQLdb"] = None
from benchwright.errors import SpecError
from benchwright.spec import load_spec, parse_spec
spec = load_spec(sys.argv[1])
bad = spec.model_dump(mode="json")
bad["workload"]["properties"]["mysql.timeout"] = "soon"
try:
    parse_spec(bad)
except SpecError as exc:
    print("refused", exc.field)
print("mysqldb", sys.modules["MySQLdb"])
"""


def test_a_mysql_spec_validates_without_mysqldb() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NO_MYSQLDB, str(ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml")],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["refused workload.properties.mysql.timeout", "mysqldb None"]
