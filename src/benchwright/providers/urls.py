"""Connection URLs built from parts, each part escaped: a user or database name is never URL syntax.

A spec's names are already held to a plain pattern (spec._base.DB_IDENT_RE); escaping here is the
second wall, so ``bench?password=...`` can never become a query parameter libpq logs in with.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

SCHEMES = {"postgres": ("postgres.url", "postgresql"), "mysql": ("mysql.url", "mysql")}


def sql_url(engine: str, user: str, hosts: Sequence[str], database: str, query: str = "") -> dict[str, str]:
    """``{"postgres.url" | "mysql.url": URL}`` for ``user`` at ``hosts`` (``host:port`` each), database
    ``database``; no password (the runner adds it from a secret or an environment variable)."""
    key, scheme = SCHEMES[engine]
    url = f"{scheme}://{quote(user, safe='')}@{','.join(hosts)}/{quote(database, safe='')}"
    return {key: url + (f"?{query}" if query else "")}
