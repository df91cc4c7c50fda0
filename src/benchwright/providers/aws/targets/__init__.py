"""AWS targets by provider name (the spec's ``target.provider``), read from the kinds (kinds/NAME/)."""

from __future__ import annotations

from typing import Any

from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.kinds import target_classes

# provider -> its target class, as each kind (providers/aws/targets/kinds/NAME/kind.py) names it
TARGETS: dict[str, type[AwsTarget[Any]]] = target_classes()

__all__ = ["TARGETS", "AwsTarget"]
