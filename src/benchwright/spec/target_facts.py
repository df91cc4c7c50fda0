"""What the rest of the system asks about a kind of target before any provider exists (issue 28).

Estimates, deadlines and the validation of a spec run in the spec layer, below the providers: they
cannot read an AWS kind's descriptor (providers/aws/targets/kinds/NAME/kind.py). So each kind's spec
model (the provider-neutral description of its target, in its folder: kinds/NAME/spec.py, which
imports only the spec layer; ``local``'s in spec/targets.py) declares these facts as ``facts``, one
``TargetFacts`` next to its fields, and the estimates and stages read them from the target they are
given instead of keeping a table by provider. Every field is required: a model that leaves one out,
or sets no ``facts`` at all, is refused when its class is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from benchwright.spec._base import Engine, Scalar, StrictModel
from benchwright.spec.server_settings import Kind as SettingsKind
from benchwright.spec.server_settings import SettingError, check_settings
from benchwright.spec.target_capacity import RESERVED, parse_bytes


@dataclass(frozen=True)
class TargetFacts:
    provision_s: float  # estimate: from create until the target answers (spec/duration.py, sharing)
    teardown_s: float  # estimate: from delete until gone
    ready_timeout_s: float  # how long provisioning may take before the run gives up (stages/steps.py)
    # What the kind can do during a run (``events``; locally failover and reboot restart the throwaway
    # server) and the operation benchmarks built for it, timed after the measured phase on its data
    # (experiments/checks.py refuses the rest): locally with the engine's own tools
    # (providers/local/operations.py), on RDS and Aurora with the service's API
    # (providers/aws/targets/operations.py), node replacement on a self-managed YugabyteDB cluster
    # with EC2's (providers/aws/targets/kinds/ec2/node_replace.py). A single RDS instance or a cache
    # has no node of its own to replace.
    events: tuple[str, ...]
    operations: tuple[str, ...]
    scale_key: str | None  # the one key a ``scale`` event's ``to`` takes (None: no scale, or no rule)
    # Benchwright creates and deletes it. False: someone else's database (an endpoint), there with or
    # without a handle (polled and torn down all the same, deleting nothing), whose data a runner
    # resets only where Benchwright wrote it (stages/plan.py), and which a runner off this machine may
    # reach only inside the stage's allowed networks (api/limits.py).
    owned: bool


@dataclass(frozen=True)
class BurstStorage:
    """A target's storage as the burst forecast (forecast/credits.py) walks it."""

    kind: str  # gp2 | gp3 | io1 | io2 | magnetic | standard ...
    size_gib: int
    iops: int | None  # provisioned
    engine: str  # the RDS engine, or "ebs" for an EC2 volume
    field: str  # the spec field that sets it
    burst_start_pct: float = 100.0  # gp2's bucket when the first phase starts (a new volume: full)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.size_gib:,} GiB"


def require_facts(model: type, provider: object) -> None:
    """Refuse a target model (one with a ``provider``) whose class declares no ``TargetFacts``."""
    if provider is not None and not isinstance(model.__dict__.get("facts"), TargetFacts):
        raise TypeError(f"{model.__name__}: a target kind's model declares its facts = TargetFacts(...)")


class TargetBase(StrictModel):
    """What every kind's target section has: an engine, its server settings, and its facts."""

    engine: Engine
    settings: dict[str, Scalar] = Field(default_factory=dict)  # server settings / parameter group
    facts: ClassVar[TargetFacts]  # each kind's own (spec/target_facts.py), checked as its class is made

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        require_facts(cls, cls.model_fields.get("provider"))

    def ready_timeout(self) -> float:
        """How long provisioning may take before the run gives up."""
        return self.facts.ready_timeout_s

    def named_hosts(self) -> list[str]:
        """The host:port entries of ``target.hosts``, where the spec names someone else's database;
        none for a target Benchwright creates."""
        return []

    def failover_needs(self) -> str | None:
        """The setting a forced failover needs and this target lacks (a standby), or None."""
        return None

    def operation_refusal(self, operation: str) -> tuple[str, str] | None:
        """Why this target cannot do ``operation`` as written: (the field to blame, or "" for the
        operation itself; the reason), or None."""
        return None

    # -- capacity (experiments/capacity.py): refused before anything is created, not found mid-load

    def reserved_connections(self) -> int:
        """Connections the server keeps for superusers (and its provider): not an ordinary user's."""
        return RESERVED.get(self.engine, 0)

    def default_max_connections(self) -> tuple[int, str] | None:
        """The server's ``max_connections`` when the settings name none, and where that figure comes
        from (with what is reserved of it); None when unknown."""
        return None

    def usable_connections(self) -> tuple[int, str] | None:
        """(connections an ordinary user may open, where that figure comes from), or None when it
        cannot be known: ``settings.max_connections`` (``maxclients``) when set, else the default,
        less the reserved ones."""
        setting = self.settings.get("max_connections") or self.settings.get("maxclients")
        reserved = self.reserved_connections()
        if setting is None:
            default = self.default_max_connections()
            return None if default is None else (default[0] - reserved, default[1])
        try:
            value = int(setting)
        except (TypeError, ValueError):
            return None
        name = "max_connections" if "max_connections" in self.settings else "maxclients"
        return value - reserved, f"target.settings.{name} {value} less {reserved} reserved"

    def usable_memory(self) -> tuple[int, str] | None:
        """(bytes a Redis-protocol server holds for data, where that figure comes from), or None when
        unknown: ``settings.maxmemory`` here; a managed cache's node says its own."""
        maxmemory = self.settings.get("maxmemory")
        if maxmemory is not None:
            parsed = parse_bytes(maxmemory)
            if parsed:
                return parsed, f"target.settings.maxmemory {maxmemory}"
        return None

    # -- burst buckets (forecast/credits.py)

    def burst_storage(self) -> BurstStorage | None:
        """The storage whose I/O credits the forecast walks; None: no storage of its own to forecast."""
        return None

    def cpu_credit_class(self) -> str | None:
        """The instance class whose CPU credits the forecast walks (a T class has some); None: none."""
        return None

    def settings_kind(self) -> SettingsKind:
        """Which list its settings are held to (spec/server_settings.py): the server that reads them,
        here the engine's own; a managed cache's parameter group and EC2's templates say their own."""
        return self.engine if self.engine in ("postgres", "mysql", "redis") else "none"

    @model_validator(mode="after")
    def _settings_allowed(self) -> TargetBase:
        # held to the allow-list of the server that reads them (spec.server_settings); names are
        # stored normalised, so the server gets exactly the name that was checked
        try:
            self.settings = check_settings(self.settings_kind(), self.settings)
        except SettingError as exc:
            raise PydanticCustomError(
                "bad_setting", "{message}", {"name": exc.name, "message": str(exc)}
            ) from None
        return self
