"""Drivers by engine name. Import is lazy so a machine without, say, a MySQL client can still run
the Redis workloads; a missing client library is a clear error naming the extra to install."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from benchwright.errors import SpecError
from benchwright.runner.drivers.base import Capability, Driver

# engine name -> (module, class). Add an engine here and it is available to every workload.
DRIVERS: dict[str, tuple[str, str]] = {
    "postgres": ("benchwright.runner.drivers.postgres", "PostgresDriver"),
    "redis": ("benchwright.runner.drivers.redis", "RedisDriver"),
    "mysql": ("benchwright.runner.drivers.mysql", "MySQLDriver"),
    "null": ("benchwright.runner.drivers.null", "NullDriver"),
}


def driver_class(engine: str) -> type[Driver]:
    try:
        module, name = DRIVERS[engine]
    except KeyError:
        raise SpecError(
            "engine", f"unknown engine {engine!r} (one of {', '.join(sorted(DRIVERS))})"
        ) from None
    try:
        cls: type[Driver] = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise SpecError(
            "engine", f"the {engine} driver needs {exc.name}: pip install 'benchwright[runner]'"
        ) from exc
    return cls


def new_driver(engine: str, properties: Mapping[str, str], thread_index: int = 0) -> Driver:
    return driver_class(engine)(properties, thread_index)


def capabilities(engine: str) -> frozenset[Capability]:
    return driver_class(engine).capabilities
