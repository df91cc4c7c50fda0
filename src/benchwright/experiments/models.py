"""The spec sections of the experiments: ``events`` (and their validation rules per provider)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EventAction = Literal["failover", "reboot", "scale"]
OperationName = Literal["dump_restore", "snapshot_restore", "pitr", "scale_out", "node_replace"]
# Which kind allows which action and operation is each kind's own: its spec model's ``facts``
# (spec/target_facts.py), read by experiments/checks.py.

# Default give-up time of a client whose every operation fails, when the spec has events: long
# enough for a managed failover (RDS Multi-AZ: 60-120 s) to end and be measured.
EVENT_GIVE_UP_S = 300.0


class EventSpec(BaseModel):
    """``{at_s: 20, action: failover}``: at ``at_s`` seconds into the measured phase, do ``action``."""

    model_config = ConfigDict(extra="forbid")

    at_s: float = Field(gt=0, le=86400)
    action: EventAction
    to: dict[str, Any] | None = None  # scale: the new size, e.g. {instance_class: db.r6g.xlarge}

    @model_validator(mode="after")
    def _rules(self) -> EventSpec:
        if self.action == "scale" and not self.to:
            raise ValueError("scale needs to: {instance_class | node_type: ...}")
        if self.action != "scale" and self.to is not None:
            raise ValueError(f"to applies to scale only, not {self.action}")
        return self
