"""The event loops' compiled hot path (``_fastloop.c``): whether it can run here, and starting it.

The C part is built with the package (``hatch_build.py``) on Linux. It is not there when the package
was installed without a compiler or on another system, and ``BENCHWRIGHT_COMPILED_LOOP=0`` turns it
off; the loops then run as Python alone, and ``measurement.method`` says so (``EventLoop.model``).
"""

from __future__ import annotations

import os
import select
from typing import Any

from benchwright.runner import fast_seam

try:
    from benchwright.runner import _fastloop
except ImportError:  # not built here: the loops run as Python
    _fastloop = None  # type: ignore[assignment]


def seam_mismatch(module: Any) -> str | None:
    """What differs between the C part's seam (the fields it reads by position) and fast_seam.py's
    declaration of it; None when they agree."""
    for name, declared in (
        ("LOOP_SPEC_FIELDS", fast_seam.LoopSpec._fields),
        ("CONNECTION_SPEC_FIELDS", fast_seam.ConnectionSpec._fields),
        ("HANDBACK_FIELDS", fast_seam.HandBack._fields),
    ):
        if tuple(getattr(module, name, ())) != declared:
            return f"_fastloop.{name} is {getattr(module, name, None)!r}, fast_seam.py declares {declared!r}"
    kinds = {"PQ": fast_seam.PQ, "RESP": fast_seam.RESP, "MY": fast_seam.MY}
    if any(getattr(module, k, None) != v for k, v in kinds.items()):
        return f"_fastloop's protocol numbers differ from fast_seam.py's {kinds!r}"
    return None


if _fastloop is not None and (_mismatch := seam_mismatch(_fastloop)) is not None:
    # a build of another _fastloop.c (a stale .so) would read the specs' fields in another order. Not an
    # ImportError: callers read that as "not installed" (drivers.driver_class) and would hide this
    raise RuntimeError(
        f"{_fastloop.__file__} was built from another _fastloop.c ({_mismatch}): rebuild it, make ext"
    )

# Why the C part gives a connection back (the module's constants; read by EventLoop._handed_back).
SLOW = getattr(_fastloop, "SLOW", 1)  # nothing sent: the request needs the Python loop
FLUSH = getattr(_fastloop, "FLUSH", 2)  # sent in part: the rest when the socket is writable
ERROR = getattr(_fastloop, "ERROR", 3)  # the server answered with an error (SQLSTATE or message)
BROKEN = getattr(_fastloop, "BROKEN", 4)  # the session was lost
DONE = getattr(_fastloop, "DONE", 5)  # its last request, or the loop is closing
TIMEOUT = getattr(_fastloop, "TIMEOUT", 6)  # a reply overdue
IN_TRANSACTION = getattr(_fastloop, "IN_TRANSACTION", 7)  # recorded, but a transaction was left open
PROTOCOL = getattr(_fastloop, "PROTOCOL", 8)  # bytes that are not RESP
REPLY = getattr(_fastloop, "REPLY", 9)  # MySQL: an error reply came, unread (the Python loop reads it)

_bound: set[str] = set()  # the client libraries the C part has looked its functions up in


def fast_loop(loop: Any, **checks: Any) -> Any:
    """The C part for ``loop`` (waiting on its epoll descriptor), or None where it cannot run."""
    if _fastloop is None or os.environ.get("BENCHWRIGHT_COMPILED_LOOP", "1") == "0":
        return None
    if not hasattr(select, "epoll") or not isinstance(loop.poller, select.epoll):
        return None
    return _fastloop.FastLoop(fast_seam.loop_spec(loop, **checks))


def key_pipelines() -> Any:
    """The C part's maker of redis-bench's pipelines (``commands.resp_blocks``), or None where the
    compiled part is not built or turned off: it is compiled code like the loop, and
    ``BENCHWRIGHT_COMPILED_LOOP=0`` measures Python alone."""
    return _request_source("key_pipelines")


def ycsb_keys() -> Any:
    """The C part's maker of YCSB's hashed keys (``YcsbWorkload.key_block``), or None as ``key_pipelines``."""
    return _request_source("ycsb_keys")


def uniform_ints() -> Any:
    """The C part's uniform integer draws from random words (TPC-B select-only), or None as ``key_pipelines``."""
    return _request_source("uniform_ints")


def special_ids() -> Any:
    """The C part's ids of sysbench's special distribution (``RandSpec.block_drawer``), or None as
    ``key_pipelines``."""
    return _request_source("special_ids")


def choose_labels() -> Any:
    """The C part's weighted choice from random words (YCSB's operation mix), or None as ``key_pipelines``."""
    return _request_source("choose_labels")


def int_requests() -> Any:
    """The C part's maker of point-select requests (``PostgresSqlWire.int_statements``,
    ``MySqlWire.int_statements``), or None as ``key_pipelines``."""
    return _request_source("int_requests")


def uniform_selects() -> Any:
    """The C part's endless point selects on uniform ids (``PostgresSqlWire.uniform_selects``,
    ``MySqlWire.uniform_selects``), or None as ``key_pipelines``."""
    return _request_source("UniformSelects")


def _request_source(name: str) -> Any:
    if _fastloop is None or os.environ.get("BENCHWRIGHT_COMPILED_LOOP", "1") == "0":
        return None
    return getattr(_fastloop, name, None)


def bind_libpq() -> bool:
    """Point the C part at the libpq this process loaded (psycopg's); False when none is found."""
    return _bind("libpq", ("libpq",))


def bind_mysql() -> bool:
    """Point the C part at the MySQL client library mysqlclient loaded (MariaDB Connector/C, or
    MySQL's libmysqlclient); False when none is found."""
    return _bind("mysql", ("libmariadb", "libmysqlclient"))


def _bind(kind: str, names: tuple[str, ...]) -> bool:
    if _fastloop is None:
        return False
    if kind not in _bound:
        path = loaded_library(names)
        if path is None:
            return False
        if kind == "libpq":
            _fastloop.bind(path)
        else:
            _fastloop.bind_mysql(path)
        _bound.add(kind)
    return True


def loaded_library(names: tuple[str, ...]) -> str | None:
    """The path of a shared library this process loaded whose file name starts with one of ``names``."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.rsplit(" ", 1)[-1].strip()
                if os.path.basename(path).startswith(names) and ".so" in path:
                    return path
    except OSError:
        pass
    return None
