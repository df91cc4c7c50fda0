"""sysbench's OLTP events without a database: which statements each test sends, in what numbers,
with ids inside the table, and option validation."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from benchwright.errors import SpecError
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.oltp.workload import OltpWorkload


def test_read_write_sends_sysbench_s_default_statement_mix() -> None:
    workload = OltpWorkload({"oltp.test": "read_write", "oltp.tables": "3", "oltp.table_size": "500"})
    statements = workload._event(random.Random(1))
    verbs = Counter(sql.split()[0] for sql, _, _ in statements)
    assert verbs == Counter({"SELECT": 14, "UPDATE": 2, "DELETE": 1, "INSERT": 1})
    assert sum(1 for sql, _, _ in statements if "BETWEEN" in sql) == 4
    for sql, params, _ in statements:
        assert any(f"sbtest{i} " in sql for i in (1, 2, 3))
        if "BETWEEN" in sql:
            assert params[1] - params[0] == 99 and 1 <= params[0] <= 500
        elif sql.startswith(("DELETE", "UPDATE")):
            assert 1 <= params[-1] <= 500


@pytest.mark.parametrize(
    ("test", "verbs"),
    [
        ("read_only", {"SELECT": 14}),
        ("write_only", {"UPDATE": 2, "DELETE": 1, "INSERT": 1}),
    ],
)
def test_read_only_and_write_only_send_only_their_half(test: str, verbs: dict[str, int]) -> None:
    workload = OltpWorkload({"oltp.test": test})
    statements = workload._event(random.Random(2))
    assert Counter(sql.split()[0] for sql, _, _ in statements) == Counter(verbs)


def test_counts_follow_the_options_and_point_select_is_one_query() -> None:
    workload = OltpWorkload(
        {
            "oltp.test": "read_write",
            "oltp.point_selects": "3",
            "oltp.delete_inserts": "2",
            "oltp.skip_trx": "on",
        }
    )
    assert workload.s.queries_per_event() == {"read": 7, "write": 6, "other": 0}
    doc = run_phase(
        PhaseConfig(
            workload="oltp",
            phase="run",
            engine="null",
            processes=1,
            operation_count=25,
            properties={"oltp.test": "point_select"},
        )
    )
    assert doc.operations["oltp_point_select"].statuses == {"OK": 25}
    assert doc.extra["queries"] == {"read": 25, "write": 0, "other": 0, "total": 25}


@pytest.mark.parametrize(
    ("props", "field"),
    [
        ({"oltp.test": "oltp_insert"}, "oltp.test"),
        ({"oltp.tables": "0"}, "oltp.tables"),
        ({"oltp.range_size": "x"}, "oltp.range_size"),
    ],
    ids=["unknown-test", "zero-tables", "not-a-number"],
)
def test_bad_options_name_the_field(props: dict[str, str], field: str) -> None:
    with pytest.raises(SpecError) as err:
        OltpWorkload(props)
    assert err.value.field == field
