"""The fast FNV-1 hash and key functions form exactly the keys the plain byte loop forms."""

from __future__ import annotations

import random

import pytest

from benchwright.runner.workloads.ycsb import generators as g
from benchwright.runner.workloads.ycsb.workload import YcsbWorkload


def test_fast_fnv_equals_the_byte_loop_over_every_kind_of_input() -> None:
    rng = random.Random(4)
    values = list(range(70_000))  # every low-16-bit table entry, plus carries into byte 2
    values += [rng.randrange(1 << 32) for _ in range(20_000)]  # the prime^4 shortcut
    values += [rng.randrange(1 << 32, 1 << 64) for _ in range(20_000)]  # high bytes set
    values += [rng.randrange(-(1 << 70), 1 << 70) for _ in range(5_000)]  # negative and > 64 bits
    values += [0, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, -1]
    assert [g.fnv_hash64(v) for v in values] == [g.fnv_hash64_reference(v) for v in values]


def test_java_abs_leaves_long_min_value_negative() -> None:
    assert g.java_abs(1 << 63) == -(1 << 63)
    assert g.java_abs((1 << 64) - 5) == 5
    assert g.java_abs(5) == 5
    assert g.fnv_hash64(0) == 6284781860667377211


@pytest.mark.parametrize(
    "props",
    [{}, {"zeropadding": "25"}, {"insertorder": "ordered"}, {"insertorder": "ordered", "zeropadding": "9"}],
    ids=["hashed", "hashed-padded", "ordered", "ordered-padded"],
)
def test_key_function_equals_the_documented_key_formation(props: dict[str, str]) -> None:
    w = YcsbWorkload(props)
    key = w.key_function()
    pad = int(props.get("zeropadding", "1"))
    ordered = props.get("insertorder") == "ordered"
    for number in [0, 1, 2, 41, 99_999, 10_000_000, 123_456_789_012]:
        raw = number if ordered else g.fnv_hash64_reference(number)
        assert key(number) == w.key(number) == "user" + str(raw).zfill(pad)


def test_event_loop_request_templates_equal_the_general_encoding() -> None:
    """The whole-record read and one-field update templates send what the general path sends."""
    from benchwright.runner.drivers.redis_wire import RedisKeyValueWire

    for datatype in ("hash", "string", "list", "set", "zset"):
        wire = RedisKeyValueWire(datatype)
        for key in ("user1", "user18446744073709551615", "k\u00e9y"):
            assert wire.read("usertable", key, None) == ("READ", *wire.read_step("usertable", key, None))
            values = {"field0": "v\u00e9" * 7}
            assert wire.update("usertable", key, values) == (
                "UPDATE",
                *wire.update_step("usertable", key, values),
            )
