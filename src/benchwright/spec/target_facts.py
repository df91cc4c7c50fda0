"""What the rest of the system asks about a kind of target before any provider exists (issue 28).

Estimates, deadlines and the validation of a spec run in the spec layer, below the providers: they
cannot read an AWS kind's descriptor (providers/aws/targets/kinds/). So each kind's spec model (the
provider-neutral description of its target, spec/targets.py) declares these facts as ``facts``, one
``TargetFacts`` next to its fields, and the estimates and stages read them from the target they are
given instead of keeping a table by provider. Every field is required: a model that leaves one out,
or sets no ``facts`` at all, is refused when its class is made.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TargetFacts:
    provision_s: float  # estimate: from create until the target answers (spec/duration.py, sharing)
    teardown_s: float  # estimate: from delete until gone
    ready_timeout_s: float  # how long provisioning may take before the run gives up (stages/steps.py)
    # What the kind can do during a run (``events``; locally failover and reboot restart the throwaway
    # server) and the operation benchmarks built for it, timed after the measured phase on its data
    # (experiments/checks.py refuses the rest): locally with the engine's own tools
    # (providers/local/operations.py), on RDS and Aurora with the service's API
    # (providers/aws/targets/operations.py), node replacement on a self-managed YugabyteDB cluster with
    # EC2's (providers/aws/targets/node_replace.py). A single RDS instance or a cache has no node of its
    # own to replace.
    events: tuple[str, ...]
    operations: tuple[str, ...]
    scale_key: str | None  # the one key a ``scale`` event's ``to`` takes (None: no scale, or no rule)


def require_facts(model: type, provider: object) -> None:
    """Refuse a target model (one with a ``provider``) whose class declares no ``TargetFacts``."""
    if provider is not None and not isinstance(model.__dict__.get("facts"), TargetFacts):
        raise TypeError(f"{model.__name__}: a target kind's model declares its facts = TargetFacts(...)")
