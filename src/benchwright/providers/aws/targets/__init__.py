"""AWS targets by provider name (the spec's ``target.provider``), read from the kinds (kinds/NAME/).

``TARGETS`` (provider -> its AwsTarget class, as each kind's kind.py names it) is built on first use,
so that importing a module under this package (a kind's spec model, the registry) imports no target
class and no AWS client code (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchwright.providers.aws.targets.kinds import target_classes

if TYPE_CHECKING:
    from benchwright.providers.aws.targets.base import AwsTarget

    TARGETS: dict[str, type[AwsTarget[Any]]]


def __getattr__(name: str) -> Any:
    """``TARGETS`` from the kinds' registry (kept once built)."""
    if name == "TARGETS":
        built = globals()["TARGETS"] = target_classes()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["TARGETS"]
