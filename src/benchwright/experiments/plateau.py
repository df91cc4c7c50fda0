"""``--stop-at-plateau``: end a concurrency sweep once throughput stops growing.

A sweep is a matrix over a client count (a path ending in ``threads``, ``threadcount`` or
``clients``), its values in increasing order. After each step (a matrix cell, all its repeats) the
measured throughput is compared with the step before; when two steps in a row grew by no more than
the noise (``validity.min_effect``, the smallest change a verdict calls a change) the rest of that
sweep is skipped. Other matrix dimensions form separate sweeps, each stopped on its own.
"""

from __future__ import annotations

from itertools import pairwise
from statistics import mean
from typing import Any

SWEEP_KEYS = ("threads", "threadcount", "clients")
STEPS_WITHIN_NOISE = 2


class PlateauWatch:
    def __init__(self, path: str, noise: float) -> None:
        self.path = path
        self.noise = noise
        self.series: dict[tuple[Any, ...], list[tuple[Any, float]]] = {}
        self.stopped: dict[tuple[Any, ...], str] = {}

    @classmethod
    def for_spec(cls, spec: Any) -> PlateauWatch | None:
        for path in spec.matrix:
            if path.rsplit(".", 1)[-1] in SWEEP_KEYS:
                return cls(path, float(spec.validity.min_effect))
        return None

    def _group(self, parameters: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(sorted((k, str(v)) for k, v in parameters.items() if k != self.path))

    def skips(self, parameters: dict[str, Any]) -> bool:
        return self._group(parameters) in self.stopped

    def observe(self, parameters: dict[str, Any], throughputs: list[float]) -> str | None:
        """Record a finished step; returns a message when this step ends its sweep."""
        if not throughputs:
            return None
        group = self._group(parameters)
        steps = self.series.setdefault(group, [])
        steps.append((parameters.get(self.path), mean(throughputs)))
        if len(steps) <= STEPS_WITHIN_NOISE:
            return None
        last = steps[-(STEPS_WITHIN_NOISE + 1) :]
        flat = all(b[1] <= a[1] * (1 + self.noise) for a, b in pairwise(last))
        if not flat:
            return None
        figures = ", ".join(f"{v}: {t:,.0f} ops/s" for v, t in last)
        message = (
            f"throughput plateaued ({figures}; each step within {self.noise:.0%}): "
            f"the rest of the {self.path} sweep is skipped (--stop-at-plateau)"
        )
        self.stopped[group] = message
        return message
