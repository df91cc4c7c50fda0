"""Which Redis data type YCSB records use: no client library imported, so validation (and the API
Lambda) can ask without loading redis-py or hiredis."""

from __future__ import annotations

from collections.abc import Mapping

from benchwright.errors import SpecError

DATATYPES = ("hash", "string", "list", "set", "zset")
SCANNABLE = ("hash", "string")  # the types whose records a lexicographic key index can range-scan
COMMAND_GROUPS = {"sortedset": "zset", "sorted_set": "zset", "zset": "zset"}


def redis_datatype(properties: Mapping[str, str]) -> str:
    """``redis.datatype``, or the Tair YCSB binding's ``redis.command_group`` (seed experiment 2 set
    ``redis.command_group=string``): the same choice under the name the article used. Both, differing,
    is an error rather than a silent pick."""
    datatype = properties.get("redis.datatype")
    group = properties.get("redis.command_group")
    if group is not None:
        group = COMMAND_GROUPS.get(group.strip().lower(), group.strip().lower())
        if group not in DATATYPES:
            raise SpecError("redis.command_group", f"{group!r} is not one of {', '.join(DATATYPES)}")
        if datatype is not None and datatype != group:
            raise SpecError(
                "redis.command_group", f"{group!r} contradicts redis.datatype={datatype!r}; give one of them"
            )
        return group
    datatype = datatype or "hash"
    if datatype not in DATATYPES:
        raise SpecError("redis.datatype", f"{datatype!r} is not one of {', '.join(DATATYPES)}")
    return datatype


def field_index(field: str) -> int:
    """FIELD7 -> 7: list positions and zset scores follow the YCSB field number."""
    return int(field[5:]) if field.startswith(("FIELD", "field")) else 0
