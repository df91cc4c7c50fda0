"""Drivers by engine name. Import is lazy so a machine without, say, a MySQL client can still run
the Redis workloads; a missing client library is a clear error naming the extra to install.

Validation (``capabilities``, ``check_settings``) never needs a client library: it runs in the Lambda
asset too, which has no mysqlclient (no manylinux wheel), and a MySQL spec must validate there."""

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

# What each engine's driver offers, kept here so a check needs no import of the driver (and of its
# client library); tests/runner/test_drivers_registry.py holds it equal to each class's own.
CAPABILITIES: dict[str, frozenset[Capability]] = {
    "postgres": frozenset({Capability.KEY_VALUE, Capability.SQL}),
    "redis": frozenset({Capability.KEY_VALUE, Capability.REDIS}),
    "mysql": frozenset({Capability.KEY_VALUE, Capability.SQL}),
    "null": frozenset(Capability),
}
# engine -> module whose ``settings(properties)`` checks the driver's properties without its client
# library; an engine not listed is checked by constructing its driver (which does not connect)
SETTINGS: dict[str, str] = {"mysql": "benchwright.runner.drivers.mysql_settings"}


def _known(engine: str) -> None:
    if engine not in DRIVERS:
        raise SpecError("engine", f"unknown engine {engine!r} (one of {', '.join(sorted(DRIVERS))})")


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
    _known(engine)
    return CAPABILITIES[engine]


def check_settings(engine: str, properties: Mapping[str, str]) -> None:
    """Raise the SpecError a driver would raise for ``properties``, without connecting."""
    _known(engine)
    module = SETTINGS.get(engine)
    if module is not None:
        importlib.import_module(module).settings(properties)
    else:
        new_driver(engine, properties)
