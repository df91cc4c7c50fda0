"""The ``target`` section: one model per provider, a discriminated union on ``provider``.

``local`` (a throwaway server on 127.0.0.1) is the spec layer's own; every other provider is an AWS
target kind's, its model in the kind's folder (providers/aws/targets/kinds/NAME/spec.py), which imports
only the spec layer. The union is made of the kinds the registry lists (kinds/__init__.py), so a new
kind adds no line here; mypy reads the same union, written out in the registry (a test holds the two
equal).

Each model owns its target's defaults and cross-field rules (storage IOPS per GB, serverless ACUs,
the EC2 templates' node counts), so a provider reads typed, already-checked fields, and its kind's
facts (spec/target_facts.py: timings, events and operations).
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import Field

from benchwright.providers.aws.targets.kinds import spec_models
from benchwright.spec.target_capacity import LOCAL_MAX_CONNECTIONS
from benchwright.spec.target_facts import TargetBase, TargetFacts

if TYPE_CHECKING:
    from benchwright.providers.aws.targets.kinds import AwsTargetModel


class LocalTarget(TargetBase):
    """A throwaway server on 127.0.0.1 in a fresh data directory, removed afterwards."""

    provider: Literal["local"]
    port: int | None = Field(default=None, ge=1024, le=65535)  # None: a free port
    startup_timeout_s: float = Field(default=60.0, gt=0, le=600)
    facts = TargetFacts(
        provision_s=5.0, teardown_s=2.0, ready_timeout_s=120.0,
        events=("failover", "reboot"), operations=("dump_restore",), scale_key=None,
        owned=True,
    )  # fmt: skip

    def ready_timeout(self) -> float:
        """The spec's own ``startup_timeout_s`` where it writes one."""
        if "startup_timeout_s" in self.model_fields_set:
            return self.startup_timeout_s
        return self.facts.ready_timeout_s

    def default_max_connections(self) -> tuple[int, str] | None:
        """The throwaway server's configured maximum: the engine's own default."""
        value, reserved = LOCAL_MAX_CONNECTIONS[self.engine], self.reserved_connections()
        return (
            value,
            f"the local {self.engine} server's default max_connections {value} less {reserved} reserved",
        )


def provider_of(model: type[TargetBase]) -> str:
    """A model's ``provider``, the value of its ``Literal`` (the union's discriminator)."""
    return str(typing.get_args(model.model_fields["provider"].annotation)[0])


AWS_MODELS: tuple[type[TargetBase], ...] = spec_models()

if TYPE_CHECKING:
    AnyTarget = LocalTarget | AwsTargetModel
else:
    AnyTarget = Union[(LocalTarget, *AWS_MODELS)]

TargetSpec = Annotated[AnyTarget, Field(discriminator="provider")]
PROVIDERS: tuple[str, ...] = ("local", *(provider_of(m) for m in AWS_MODELS))
# the kinds Benchwright creates in AWS: reachable only from a runner in their VPC (an endpoint is
# someone else's database, reachable from wherever it answers)
CLOUD_PROVIDERS: tuple[str, ...] = tuple(provider_of(m) for m in AWS_MODELS if m.facts.owned)
