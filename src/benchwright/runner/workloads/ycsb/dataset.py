"""The identity of a YCSB dataset and the check of one loaded record (runner/dataset.py).

Everything the load phase writes and a run phase relies on: the table (or Redis key space), how many
records from which number, the key format (prefix, hashed or ordered, padding), the record layout
(field count, names, length and its distribution) and, on Redis, the data type each record uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.redis_datatype import redis_datatype
from benchwright.runner.workloads.ycsb.properties import CoreSettings

KEY_PREFIX = "user"  # YCSB's key prefix: "user" + the (hashed) record number


def identity(settings: CoreSettings, properties: Mapping[str, str], engine: str) -> DatasetIdentity:
    s = settings
    shape: dict[str, Any] = {
        "recordcount": s.recordcount,
        "insertstart": s.insertstart,
        "fieldcount": s.fieldcount,
        "fieldlength": s.fieldlength,
        "fieldlengthdistribution": s.fieldlengthdistribution,
        "fieldnameprefix": s.fieldnameprefix,
        "key_prefix": KEY_PREFIX,
        "insertorder": "ordered" if s.ordered_inserts else "hashed",
        "zeropadding": s.zeropadding,
    }
    if s.fieldlengthdistribution != "constant":
        shape["minfieldlength"] = s.minfieldlength
    columns: dict[str, tuple[str, ...]] = {}
    if engine == "redis":
        shape["datatype"] = redis_datatype(properties)
        shape["redis_db"] = properties.get("redis.db", "0")
    else:
        columns[s.table] = ("ycsb_key", *(f"field{i}" for i in range(s.fieldcount)))
    return DatasetIdentity("ycsb", (s.table,), {s.table: s.insertcount}, shape, columns)


def sample_problems(settings: CoreSettings, driver: Any, key: str, datatype: str | None) -> list[str]:
    """Read the load's first record back and compare its shape with the settings."""
    s = settings
    if driver.engine == "redis":
        values, problem = _redis_values(driver, s.table, key, datatype or "hash")
        if problem:
            return [problem]
        exact = datatype not in ("set", "zset")  # equal short values collapse into one member
    else:
        row = driver.fetchone(f"SELECT * FROM {s.table} WHERE YCSB_KEY = %s", (key,))
        if row is None:
            return [f"record {key} (the first this load inserts) is not in {s.table}"]
        values, exact = [v for v in row[1:]], True
    out = []
    if (exact and len(values) != s.fieldcount) or not 0 < len(values) <= s.fieldcount:
        out.append(f"record {key} has {len(values)} field(s), fieldcount={s.fieldcount} wanted")
    low = s.fieldlength if s.fieldlengthdistribution == "constant" else s.minfieldlength
    lengths = sorted({len(v) for v in values if v is not None})
    if any(not low <= n <= s.fieldlength for n in lengths) or None in values:
        want = f"{s.fieldlength}" if low == s.fieldlength else f"{low}..{s.fieldlength}"
        out.append(f"record {key} has field lengths {lengths}, fieldlength={want} wanted")
    return out


def _redis_values(driver: Any, table: str, key: str, datatype: str) -> tuple[list[Any], str | None]:
    k = key if table == "usertable" else f"{table}:{key}"
    kind = driver.command("TYPE", k)
    kind = kind.decode() if isinstance(kind, bytes) else str(kind)
    if kind == "none":
        return [], f"record {k} (the first this load inserts) is not in the database"
    if kind != datatype:
        return [], f"record {k} is a Redis {kind}, redis.datatype={datatype} wanted"
    if datatype == "hash":
        values = driver.command("HVALS", k)
    elif datatype == "string":
        # the whole value, as GET gives it, under another name in the server's commandstats: the
        # check's read never counts as one of the workload's GETs
        values = [driver.command("GETRANGE", k, 0, -1)]
    elif datatype == "list":
        values = driver.command("LRANGE", k, 0, -1)
    elif datatype == "set":
        values = driver.command("SMEMBERS", k)
    else:
        values = driver.command("ZRANGE", k, 0, -1)
    return list(values), None
