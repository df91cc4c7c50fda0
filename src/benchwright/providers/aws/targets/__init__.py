"""AWS targets by provider name (the spec's ``target.provider``), read from the kinds."""

from __future__ import annotations

from typing import Any

from benchwright.providers.aws.targets.aurora import AuroraTarget
from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.ec2 import Ec2Target
from benchwright.providers.aws.targets.elasticache import ElastiCacheTarget
from benchwright.providers.aws.targets.endpoint import EndpointTarget
from benchwright.providers.aws.targets.kinds import target_classes
from benchwright.providers.aws.targets.memorydb import MemoryDbTarget
from benchwright.providers.aws.targets.rds import RdsTarget

# provider -> its target class, as each kind (providers/aws/targets/kinds/) names it
TARGETS: dict[str, type[AwsTarget[Any]]] = target_classes()

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
