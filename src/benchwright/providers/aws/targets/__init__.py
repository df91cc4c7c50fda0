"""AWS targets by provider name (the spec's ``target.provider``)."""

from __future__ import annotations

from typing import Any

from benchwright.providers.aws.targets.aurora import AuroraTarget
from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.ec2 import Ec2Target
from benchwright.providers.aws.targets.elasticache import ElastiCacheTarget
from benchwright.providers.aws.targets.endpoint import EndpointTarget
from benchwright.providers.aws.targets.memorydb import MemoryDbTarget
from benchwright.providers.aws.targets.rds import RdsTarget

TARGETS: dict[str, type[AwsTarget[Any]]] = {
    "rds": RdsTarget,
    "aurora": AuroraTarget,
    "elasticache": ElastiCacheTarget,
    "memorydb": MemoryDbTarget,
    "ec2": Ec2Target,
    "endpoint": EndpointTarget,
}

__all__ = [
    "TARGETS",
    "AuroraTarget",
    "AwsTarget",
    "Ec2Target",
    "ElastiCacheTarget",
    "EndpointTarget",
    "MemoryDbTarget",
    "RdsTarget",
]
