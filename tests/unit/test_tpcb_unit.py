"""pgbench compatibility without a database: the DDL pgbench -i issues, the rows it writes, and
progress / summary lines in pgbench's layout rebuilt from a result document."""

from __future__ import annotations

import pytest

from benchwright.errors import SpecError
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.tpcb import schema
from benchwright.runner.workloads.tpcb.pgbench_format import summary_lines
from benchwright.runner.workloads.tpcb.workload import TpcbWorkload


def test_ddl_matches_pgbench_i_including_fillfactor_and_bigint_from_scale_20000() -> None:
    small = schema.create_statements("postgres", 10, 90)
    assert (
        small[2]
        == "create table pgbench_accounts(aid int not null,bid int,abalance int,filler char(84)) with (fillfactor=90)"
    )
    assert (
        small[0]
        == "create table pgbench_history(tid int,bid int,aid int,delta int,mtime timestamp,filler char(22))"
    )
    assert "aid bigint not null" in schema.create_statements("postgres", 20_000, 100)[2]
    mysql = schema.create_statements("mysql", 1, 90)
    assert all("fillfactor" not in s and s.endswith("engine=InnoDB") for s in mysql)
    assert "mtime datetime" in mysql[0]


def test_rows_are_pgbench_s() -> None:
    assert list(schema.branch_rows(2)) == [(1, 0, None), (2, 0, None)]
    tellers = list(schema.teller_rows(2))
    assert len(tellers) == 20 and tellers[9] == (10, 1, 0, None) and tellers[10] == (11, 2, 0, None)
    accounts = list(schema.account_rows(3))
    assert (
        accounts[0] == (200_001, 3, 0, "")
        and accounts[-1] == (300_000, 3, 0, "")
        and len(accounts) == 100_000
    )


def test_scripts_and_summary_lines_on_the_null_driver() -> None:
    props = {"tpcb.scale": "3", "tpcb.script": "select-only"}
    doc = run_phase(
        PhaseConfig(
            workload="tpcb",
            phase="run",
            engine="null",
            properties=props,
            threads=2,
            processes=1,
            max_seconds=1.2,
            target=200,
        )
    )
    assert set(doc.operations) == {"select-only"}
    summary = summary_lines(doc, 2, 1)
    assert summary[0] == "transaction type: <builtin: select only>"
    assert summary[-1].startswith("tps = ") and summary[-1].endswith("(without initial connection time)")


@pytest.mark.parametrize(
    ("props", "field"),
    [
        ({"tpcb.script": "tpcc"}, "tpcb.script"),
        ({"tpcb.fillfactor": "5"}, "tpcb.fillfactor"),
        ({"tpcb.scale": "0"}, "tpcb.scale"),
    ],
    ids=["unknown-script", "fillfactor-below-10", "zero-scale"],
)
def test_bad_settings_name_the_field(props: dict[str, str], field: str) -> None:
    with pytest.raises(SpecError) as err:
        TpcbWorkload(props)
    assert err.value.field == field
