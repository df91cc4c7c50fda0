"""AWS providers: the target kinds (targets/kinds/NAME/: RDS, Aurora, ElastiCache, MemoryDB, EC2
self-managed, endpoint; the ECS runner's tasks); EC2 / ECS runners; CloudWatch metrics; S3 results
with a Timestream or InfluxDB sink; Price List; Slack via Secrets Manager; tags and the janitor.
``aws_providers`` (bundle.py) bundles them for one run's spec.

Importing the package imports nothing else: the runner's run session takes only its names
(names.py), and the spec layer reads the kinds' spec models below it. The bundle's names stay
importable from here, loaded on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.providers.aws.bundle import LazyInfluxSink, aws_providers, make_sink
    from benchwright.providers.aws.common import Clients
    from benchwright.providers.aws.config import AwsSettings

# name -> the module (of this package) that defines it
_HOMES = {
    "aws_providers": "bundle",
    "make_sink": "bundle",
    "LazyInfluxSink": "bundle",
    "Clients": "common",
    "AwsSettings": "config",
}


def __getattr__(name: str) -> Any:
    """``from benchwright.providers.aws import aws_providers``: its module, imported now."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = ["AwsSettings", "Clients", "LazyInfluxSink", "aws_providers", "make_sink"]
