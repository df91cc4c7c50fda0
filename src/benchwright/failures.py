"""How a result names failed attempts: an operation's failures are their own entry, as YCSB names
them (``READ`` -> ``READ-FAILED``). The results layer and the runner's recorder share these names."""

from __future__ import annotations

# YCSB's name for an operation's failed attempts: READ -> READ-FAILED. Its statuses say why: ERROR
# (the operation failed) or RETRY (a deadlock or serialization failure; the client re-ran it).
FAILED_SUFFIX = "-FAILED"


def failed_name(operation: str) -> str:
    """The entry that holds ``operation``'s failures (YCSB's ``[READ-FAILED]``)."""
    return operation + FAILED_SUFFIX


def is_failed(name: str) -> bool:
    """True for an entry of failed operations (``READ-FAILED``): never throughput."""
    return name.endswith(FAILED_SUFFIX)


def base_operation(name: str) -> str:
    """``READ-FAILED`` -> ``READ``; any other name unchanged."""
    return name[: -len(FAILED_SUFFIX)] if is_failed(name) else name
