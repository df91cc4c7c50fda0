"""sysbench's row-id distributions (``--rand-type``), so OLTP numbers compare with sysbench's.

Which rows a benchmark touches decides how much of the table lives in the buffer cache, so a run
is only comparable with sysbench's when its ids follow the same distribution. sysbench 1.0
(Debian 12 ships 1.0.20; 0.5 behaved the same) draws every id with ``--rand-type``, default
``special``. The definitions below follow sysbench 1.0.20's documentation and behaviour over
[low, high]; with t = high - low:

- ``uniform``: every id equally likely.
- ``gaussian``: the mean of ``rand-spec-iter`` (12) uniform draws over the range (Irwin-Hall,
  centred, standard deviation ~ t / sqrt(12 * iter)).
- ``special`` (the default): ``rand-spec-res`` % (75) of the draws fall uniformly in a hot band of
  ``rand-spec-pct`` % (1) of the values *in the middle of the range*; the rest are ``gaussian``
  over the whole range. As in sysbench, a hot draw reuses the uniform number that chose the hot
  branch, so hot draws cover the upper ``rand-spec-res`` % of the band (a quirk kept on purpose:
  the cache footprint is what we must reproduce).
- ``pareto``: low + (t + 1) * u ** (log h / log(1 - h)), ``rand-pareto-h`` = 0.2: the lowest
  h of the ids get 1 - h of the draws (80/20).
- ``zipfian``: P(low + k - 1) proportional to k ** -``rand-zipfian-exp`` (0.8), low ids hottest.
  Not in sysbench 1.0.20 (it came with sysbench 1.1, where the default type became uniform and
  special was dropped); drawn exactly by rejection-inversion (Hoermann and Derflinger, 1996) in
  O(1) without a table, so any table size works.

Numbers are not bit-identical with sysbench's (its generator is xoroshiro128+ seeded from libc);
the distributions are. Each thread has its own ``random.Random``, so a seed repeats a run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import reduce
from operator import add

from benchwright.errors import SpecError
from benchwright.runner import compiled

RAND_TYPES = ("special", "uniform", "gaussian", "pareto", "zipfian")
SYSBENCH_1_0_TYPES = ("special", "uniform", "gaussian", "pareto")  # what sysbench 1.0.20 accepts

IdDraw = Callable[[], int]


@dataclass(frozen=True)
class RandSpec:
    """sysbench's random-number options; the defaults are sysbench 1.0.20's."""

    type: str = "special"
    spec_iter: int = 12
    spec_pct: int = 1
    spec_res: int = 75
    pareto_h: float = 0.2
    zipfian_exp: float = 0.8

    @classmethod
    def from_properties(cls, props: Mapping[str, str], prefix: str = "oltp.") -> RandSpec:
        """Read ``{prefix}rand_type`` and the knobs; a bad value raises SpecError naming the property."""
        d = cls()
        kind = props.get(f"{prefix}rand_type", d.type).strip().lower()
        if kind not in RAND_TYPES:
            raise SpecError(
                f"{prefix}rand_type", f"unknown distribution {kind!r} (one of {', '.join(RAND_TYPES)})"
            )
        return cls(
            type=kind,
            spec_iter=_int(props, f"{prefix}rand_spec_iter", d.spec_iter, 1, 1000),
            spec_pct=_int(props, f"{prefix}rand_spec_pct", d.spec_pct, 0, 100),
            spec_res=_int(props, f"{prefix}rand_spec_res", d.spec_res, 0, 100),
            pareto_h=_float(props, f"{prefix}rand_pareto_h", d.pareto_h, 0.0, 1.0, open_ends=True),
            zipfian_exp=_float(
                props, f"{prefix}rand_zipfian_exp", d.zipfian_exp, 0.0, 100.0, open_ends=False
            ),
        )

    def knobs(self) -> dict[str, int | float]:
        """The options that shape this type's distribution (sysbench's names with underscores)."""
        if self.type == "special":
            return {
                "rand_spec_iter": self.spec_iter,
                "rand_spec_pct": self.spec_pct,
                "rand_spec_res": self.spec_res,
            }
        if self.type == "gaussian":
            return {"rand_spec_iter": self.spec_iter}
        if self.type == "pareto":
            return {"rand_pareto_h": self.pareto_h}
        if self.type == "zipfian":
            return {"rand_zipfian_exp": self.zipfian_exp}
        return {}

    def describe(self) -> str:
        """One line for method notes and logs, e.g. ``special (rand-spec-iter=12, ...)``."""
        knobs = ", ".join(f"{k.replace('_', '-')}={v:g}" for k, v in self.knobs().items())
        return f"{self.type} ({knobs})" if knobs else self.type

    def sysbench_flags(self) -> list[str]:
        """The sysbench command-line flags that draw ids the same way (for side-by-side runs)."""
        return [f"--rand-type={self.type}"] + [
            f"--{k.replace('_', '-')}={v:g}" for k, v in self.knobs().items()
        ]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def block_drawer(self, low: int, high: int, rng: random.Random) -> Callable[[int], list[int]]:
        """``n`` ids at a time, the ones ``drawer``'s ``n`` calls give, in order and from the same
        generator; ``special`` (sysbench 1.0's default) and ``uniform`` are drawn in C where the
        compiled part is built (``_fastloop.special_ids``, ``uniform_ints``)."""
        draw = self.drawer(low, high, rng)
        t = high - low
        if self.type == "special" and t < 2**62 and (special := compiled.special_ids()) is not None:
            cold = (100 - self.spec_res) / 100 if t > 0 else 0.0  # as _special
            band = t * self.spec_pct / 100
            args = (low, high, cold, t / 2 - band / 2, band, t / self.spec_iter, self.spec_iter)
            u = rng.random
            return lambda n: special(u, n, args)
        if self.type == "uniform" and t < 2**53 and (uniform := compiled.uniform_ints()) is not None:
            words = rng.getrandbits
            return lambda n: uniform(words(64 * n).to_bytes(8 * n, "little"), low, t + 1)
        return lambda n: [draw() for _ in range(n)]

    def drawer(self, low: int, high: int, rng: random.Random) -> IdDraw:
        """A function returning ids in [low, high] drawn from this distribution with ``rng``."""
        if high < low:
            raise ValueError(f"empty id range [{low}, {high}]")
        make = {
            "uniform": _uniform,
            "gaussian": _gaussian,
            "special": _special,
            "pareto": _pareto,
            "zipfian": _zipfian,
        }[self.type]
        return make(self, low, high, rng)


def _int(props: Mapping[str, str], key: str, default: int, low: int, high: int) -> int:
    raw = props.get(key)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise SpecError(key, f"expected an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise SpecError(key, f"must be between {low} and {high}, got {raw!r}")
    return value


def _float(
    props: Mapping[str, str], key: str, default: float, low: float, high: float, *, open_ends: bool
) -> float:
    raw = props.get(key)
    if raw is None:
        return default
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise SpecError(key, f"expected a number, got {raw!r}") from None
    inside = low < value < high if open_ends else low <= value <= high
    if not math.isfinite(value) or not inside:
        bounds = f"strictly between {low:g} and {high:g}" if open_ends else f"between {low:g} and {high:g}"
        raise SpecError(key, f"must be {bounds}, got {raw!r}")
    return value


# ------------------------------------------------------------------ the distributions
def _uniform(spec: RandSpec, low: int, high: int, rng: random.Random) -> IdDraw:
    u, width = rng.random, high - low + 1

    def draw() -> int:
        return low + int(u() * width)

    return draw


def _gaussian(spec: RandSpec, low: int, high: int, rng: random.Random) -> IdDraw:
    u, n = rng.random, spec.spec_iter
    scale = (high - low + 1) / n  # mean of n uniforms over [0, width)

    def draw() -> int:  # min(): float rounding must never step past high
        return min(low + int(sum([u() for _ in range(n)]) * scale), high)

    return draw


def _special(spec: RandSpec, low: int, high: int, rng: random.Random) -> IdDraw:
    u, n = rng.random, spec.spec_iter
    t = high - low
    cold = (100 - spec.spec_res) / 100 if t > 0 else 0.0  # share of draws that are gaussian
    band = t * spec.spec_pct / 100  # width of the hot band, centred on low + t / 2
    band_start = t / 2 - band / 2
    scale = t / n

    def draw() -> int:
        first = u()
        if first < cold:  # summed left to right, as _fastloop.special_ids sums (sum() compensates on 3.12+)
            return min(low + int(reduce(add, [u() for _ in range(n)], 0.0) * scale), high)
        # hot: the same uniform number placed in the band (so only its upper res % is reached)
        return min(low + int(band_start + first * (band + 1)), high)

    return draw


def _pareto(spec: RandSpec, low: int, high: int, rng: random.Random) -> IdDraw:
    u, width = rng.random, high - low + 1
    power = math.log(spec.pareto_h) / math.log(1 - spec.pareto_h)

    def draw() -> int:
        return min(low + int(width * u() ** power), high)

    return draw


def _zipfian(spec: RandSpec, low: int, high: int, rng: random.Random) -> IdDraw:
    """Rejection-inversion: invert the integral H of the hat x ** -q over [0.5, n + 0.5], round to
    the nearest rank k, and accept k with probability k ** -q / (H(k + 1/2) - H(k - 1/2)); rank 1
    is always accepted, so P(k) is exactly proportional to k ** -q."""
    u, q, n = rng.random, spec.zipfian_exp, high - low + 1
    one_minus_q = 1.0 - q

    def hat_integral(x: float) -> float:  # H(x) = (x^(1-q) - 1) / (1-q), log x when q = 1
        lx = math.log(x)
        y = one_minus_q * lx
        return lx * (math.expm1(y) / y if abs(y) > 1e-8 else 1 + y / 2 * (1 + y / 3 * (1 + y / 4)))

    def hat_inverse(h: float) -> float:
        y = max(h * one_minus_q, -1.0)  # rounding may step just below the domain's edge
        factor = math.log1p(y) / y if abs(y) > 1e-8 else 1 - y * (0.5 - y * (1 / 3 - 0.25 * y))
        return math.exp(factor * h)

    def density(x: float) -> float:
        return math.exp(-q * math.log(x))

    h_top = hat_integral(n + 0.5)
    h_first = hat_integral(1.5) - 1.0  # so that rank 1 gets exactly density(1) = 1
    squeeze = 2.0 - hat_inverse(hat_integral(2.5) - density(2.0))  # cheap acceptance test

    def draw() -> int:
        while True:
            h = h_top + u() * (h_first - h_top)
            x = hat_inverse(h)
            k = min(max(int(x + 0.5), 1), n)
            if k - x <= squeeze or h >= hat_integral(k + 0.5) - density(k):
                return low + k - 1

    return draw
