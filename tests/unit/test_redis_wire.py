"""runner/drivers/redis_wire.py: the event loop's request templates against the general encoding."""

from __future__ import annotations

from benchwright.runner.drivers.redis_wire import RedisKeyValueWire


def test_event_loop_request_templates_equal_the_general_encoding() -> None:
    """The whole-record read and one-field update templates send what the general path sends."""
    for datatype in ("hash", "string", "list", "set", "zset"):
        wire = RedisKeyValueWire(datatype)
        for key in ("user1", "user18446744073709551615", "k\u00e9y"):
            assert wire.read("usertable", key, None) == ("READ", *wire.read_step("usertable", key, None))
            values = {"field0": "v\u00e9" * 7}
            assert wire.update("usertable", key, values) == (
                "UPDATE",
                *wire.update_step("usertable", key, values),
            )
