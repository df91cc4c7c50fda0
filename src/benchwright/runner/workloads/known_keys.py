"""The properties Benchwright's own namespaces define, so a typo is an error with a suggestion.

``tpcc.warehouse`` or ``redisbench.clientz`` used to be ignored silently and the run measured the
default instead. Keys in these namespaces must be one of the names below; anything else is refused
at validation with difflib's closest match. Namespaces owned by YCSB bindings or native tools (``db.``,
``jdbc.``, ``pgbench.`` ...) are not checked here. tests/unit/test_bad_input_validation.py checks
that every literal ``namespace.key`` in the source is listed.
"""

from __future__ import annotations

import difflib

from benchwright.errors import SpecError
from benchwright.runner.workloads.registry import registered

# The drivers' and the client's namespaces; each workload's own (``tpcc.``, ``oltp.`` ...) is in its
# descriptor (``property_namespace``, ``known_properties``), added to ``KNOWN`` below.
DRIVER_KEYS: dict[str, frozenset[str]] = {
    "redis.": frozenset(
        {
            "host",
            "port",
            "db",
            "password",
            "username",
            "tls",
            "tls_verify",
            "timeout",
            "connect_timeout",
            "datatype",
            "command_group",
            "cluster",
        }
    ),
    "postgres.": frozenset({"url", "password", "timeout", "connect_timeout", "ddl_suffix", "primary_key"}),
    "mysql.": frozenset({"url", "timeout", "connect_timeout"}),
    "client.": frozenset({"model", "connect_timeout_s", "op_timeout_s", "give_up_s"}),
    "null.": frozenset({"url", "records", "fail_every"}),
}


def known() -> dict[str, frozenset[str]]:
    """Every checked namespace: each registered workload's, then the drivers' and the client's."""
    out: dict[str, frozenset[str]] = {}
    for cls in registered().values():
        found = cls.descriptor
        if found.property_namespace is not None:
            out[found.property_namespace] = (
                out.get(found.property_namespace, frozenset()) | found.known_properties
            )
    return {**out, **DRIVER_KEYS}


KNOWN = known()  # the built-ins' (tests/unit/test_bad_input_validation.py reads it); checks use known()


def check_known_keys(props: dict[str, str]) -> None:
    """Refuse a key in one of our namespaces that we do not define, suggesting the nearest one."""
    namespaces = known()
    for key in props:
        for prefix, names in namespaces.items():
            if not key.startswith(prefix):
                continue
            name = key.removeprefix(prefix)
            if name in names:
                break
            close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
            hint = f"did you mean {prefix}{close[0]}?" if close else f"known: {', '.join(sorted(names))}"
            raise SpecError(key, f"unknown property ({hint})")
