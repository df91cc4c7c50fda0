"""Field rules several target kinds' models share (each model is in its kind's folder,
providers/aws/targets/kinds/NAME/spec.py): an instance class's form, and the one-shard limit of the
runner's Redis clients."""

from __future__ import annotations

import re
from typing import Any

from benchwright.spec._base import shown

# The runner's Redis clients speak to one node (no Redis Cluster slot map or MOVED redirects): with
# several shards most keys would fail. Refused before anything is created rather than measured wrong.
ONE_SHARD = (
    "more than one shard needs a Redis Cluster client, which the runner does not have yet; "
    "use one shard (cluster_mode: false, shards: 1) and scale the node type instead"
)


def class_form(prefix: str, *also: str) -> Any:
    """A field validator: ``PREFIXfamily.size`` (db.r6g.large, cache.t4g.micro), or one of ``also``."""

    def check(cls: Any, v: str) -> str:
        if v not in also and not re.match(rf"^{re.escape(prefix)}[a-z0-9-]+\.[a-z0-9]+$", v):
            raise ValueError(f"{shown(v)} is not an instance class of the form {prefix}FAMILY.SIZE")
        return v

    return classmethod(check)
