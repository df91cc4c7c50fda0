"""runner/workloads/ycsb/stream.py: the run phase drawn in blocks keeps YCSB's semantics: the
operation mix, reads only of records that exist (loaded, or inserted earlier by this client), each
client's inserts in its own slice of record numbers, one-field updates of a random field, and the
request builders' block methods send what one request at a time sends."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import pytest

from benchwright.runner.drivers.redis_wire import RedisKeyValueWire
from benchwright.runner.workloads.base import ThreadInfo
from benchwright.runner.workloads.ycsb import stream
from benchwright.runner.workloads.ycsb.workload import YcsbWorkload


@dataclass
class Made:
    """A request builder that keeps what it was asked to build; each request is its number here
    (a block builds its reads, then its updates ...: the stream puts them back in operation order)."""

    built: list[tuple[str, str, Any]] = field(default_factory=list)
    ops: list[tuple[str, str, Any]] = field(default_factory=list)  # in the order they are sent

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> int:
        self.built.append(("READ", key, fields))
        return len(self.built) - 1

    def update(self, table: str, key: str, values: dict[str, str]) -> int:
        self.built.append(("UPDATE", key, values))
        return len(self.built) - 1

    def insert(self, table: str, key: str, values: dict[str, str]) -> int:
        self.built.append(("INSERT", key, values))
        return len(self.built) - 1

    def scan(self, table: str, key: str, count: int, fields: Sequence[str] | None) -> int:
        self.built.append(("SCAN", key, count))
        return len(self.built) - 1

    def read_modify_write(self, table: str, key: str, fields: Any, values: dict[str, str]) -> int:
        self.built.append(("READ-MODIFY-WRITE", key, values))
        return len(self.built) - 1


def run_ops(props: dict[str, str], n: int, index: int = 0, count: int = 1) -> tuple[YcsbWorkload, Made]:
    workload = YcsbWorkload(props)
    made = Made()
    requests = workload._run(made, ThreadInfo(index=index, count=count, seed=99), random.Random(99))
    sent = list(islice(requests, n))
    assert len(set(sent)) == n  # each built request sent once
    made.ops = [made.built[i] for i in sent]
    return workload, made


@pytest.mark.parametrize("mix", ["workloada", "workloadb", "workloadf"])
def test_operation_mix_follows_the_proportions(mix: str) -> None:
    props = {"workload": mix, "recordcount": "1000"}
    shares = {
        "workloada": {"READ": 0.5, "UPDATE": 0.5},
        "workloadb": {"READ": 0.95, "UPDATE": 0.05},
        "workloadf": {"READ": 0.5, "READ-MODIFY-WRITE": 0.5},
    }[mix]
    from benchwright.runner.workloads.ycsb.properties import packaged_path, parse_property_file

    path = packaged_path(mix)
    assert path is not None
    _, made = run_ops({**parse_property_file(path), **props}, 40_000)
    counts = Counter(op for op, _, _ in made.ops)
    assert set(counts) == set(shares)
    for op, share in shares.items():
        assert counts[op] / 40_000 == pytest.approx(share, abs=0.01)


@pytest.mark.parametrize(
    "distribution", ["uniform", "zipfian", "latest", "hotspot", "exponential", "sequential"]
)
def test_reads_only_touch_records_that_exist_and_inserts_take_this_clients_slice(distribution: str) -> None:
    props = {
        "recordcount": "500",
        "insertcount": "400",  # records 400-499 never loaded: a draw there is redrawn or kept below
        "readproportion": "0.6",
        "updateproportion": "0.1",
        "scanproportion": "0.1",
        "insertproportion": "0.2",
        "requestdistribution": distribution,
    }
    workload, made = run_ops(props, 5000, index=2, count=3)
    key = workload.key_function()
    known = {key(n): n for n in range(500)}
    inserted = 0
    for op, k, _ in made.ops:
        if op == "INSERT":
            assert k == key(500 + 2 + 3 * inserted)  # this client's own slice, in order
            known[k] = 500 + 2 + 3 * inserted
            inserted += 1
        else:
            assert k in known, (op, k)  # loaded, or inserted before by this client
    assert inserted == pytest.approx(1000, rel=0.1)
    if distribution in ("latest", "exponential"):  # the newest records are the popular ones
        numbers = [known[k] for op, k, _ in made.ops[-1000:] if op == "READ"]
        assert sum(n >= 500 for n in numbers) / len(numbers) > 0.3


def test_one_field_updates_write_one_random_field_of_the_records_length() -> None:
    props = {"recordcount": "100", "readproportion": "0", "updateproportion": "1", "fieldcount": "4"}
    _, made = run_ops({**props, "fieldlength": "7"}, 8000)
    fields = Counter()
    for _, _, values in made.ops:
        ((name, value),) = values.items()
        fields[name] += 1
        assert len(value) == 7
    assert set(fields) == {"field0", "field1", "field2", "field3"}
    assert min(fields.values()) > 1800
    _, made = run_ops({**props, "writeallfields": "true"}, 10)
    assert all(len(values) == 4 for _, _, values in made.ops)


@pytest.mark.parametrize("datatype", ["hash", "string", "list", "set", "zset"])
def test_wire_block_methods_send_what_one_request_at_a_time_sends(datatype: str) -> None:
    wire = RedisKeyValueWire(datatype)
    keys = ["user1", "user18446744073709551615", "k\u00e9y", "user42"]
    one = [{"field0": "v\u00e9" * 7}, {"field0": "x"}, {"field0": ""}, {"field0": "%s%d"}]
    for table in ("usertable", "other"):
        assert wire.reads(table, keys, None) == [wire.read(table, k, None) for k in keys]
        fields = [["field0"], None, ["field1", "field2"], ["field0"]]
        assert wire.reads(table, keys, fields) == [
            wire.read(table, k, f) for k, f in zip(keys, fields, strict=True)
        ]
        for values in (one, [{"field0": "a", "field1": "b"}] * 4):
            assert wire.updates(table, keys, values) == [
                wire.update(table, k, v) for k, v in zip(keys, values, strict=True)
            ]
    assert stream.BLOCK >= 1


@pytest.mark.parametrize("datatype", ["hash", "string", "list", "set", "zset"])
def test_encoded_updates_send_what_the_dictionary_updates_send(datatype: str) -> None:
    wire = RedisKeyValueWire(datatype)
    keys = ["user1", "user18446744073709551615", "k\u00e9y", "user42"]
    pairs = [(b"field0", b"v" * 7), (b"field0", b"x"), (b"field1", b""), (b"field0", b"%s%d")]
    for table in ("usertable", "other"):
        assert wire.updates_encoded(table, keys, pairs) == [
            wire.update(table, k, {n.decode(): v.decode()}) for k, (n, v) in zip(keys, pairs, strict=True)
        ]
        assert wire.reads(table, keys, None) == wire.reads(table, keys, None)  # the second from _READS
        assert wire.reads(table, keys, None) == [wire.read(table, k, None) for k in keys]


@pytest.mark.parametrize("fieldcount", ["1", "3"])
def test_the_loops_encoded_updates_are_the_threads_updates_from_the_same_seed(fieldcount: str) -> None:
    """The event loop's wire takes one-field updates in bytes (``updates_encoded``), the threads'
    builder as dictionaries: the same seed gives the same operations, values included."""
    props = {
        "recordcount": "100",
        "readproportion": "0.5",
        "updateproportion": "0.5",
        "fieldcount": fieldcount,
    }
    props["redis.datatype"] = "hash"
    _, made = run_ops(props, 500)
    workload = YcsbWorkload(props)
    requests = workload._run(
        RedisKeyValueWire("hash"), ThreadInfo(index=0, count=1, seed=99), random.Random(99)
    )
    wire = RedisKeyValueWire("hash")
    for (op, key, values), request in zip(made.ops, islice(requests, 500), strict=True):
        if op == "UPDATE":
            assert request == wire.update("usertable", key, values)
        else:
            assert request == wire.read("usertable", key, values)
