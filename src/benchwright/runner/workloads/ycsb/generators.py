"""Key, length and operation choosers with YCSB's distributions, in constant memory.

Written from the published descriptions: the Zipfian generator is the rejection-free method of
Gray et al., "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), which YCSB uses;
the scrambled variant draws from a Zipfian over 10^10 items and spreads the popular items over the
key space with a 64-bit FNV-1 hash, exactly as YCSB does, so hot keys are the same keys YCSB picks.
Every generator takes its own ``random.Random`` so threads never share state.

The run phase draws in blocks (``block(n)``: n draws as one list, each by the same formula as
``next()``, from the same random stream: tests/unit/test_ycsb_generators.py compares the two), so a
draw costs a list element rather than a Python call.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections.abc import Sequence

from benchwright.runner import compiled

FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325
FNV_PRIME_64 = 1099511628211
MASK_64 = (1 << 64) - 1
ZIPFIAN_CONSTANT = 0.99
SCRAMBLED_ITEM_COUNT = 10_000_000_000
# zeta(10^10, 0.99): the constant YCSB ships so it never sums ten billion terms.
SCRAMBLED_ZETAN_099 = 26.46902820178302
RANK_CACHE = 1 << 11  # the most popular scrambled Zipfian ranks (~30% of draws), remembered per generator


def fnv_hash64_reference(value: int) -> int:
    """YCSB's Utils.fnvhash64: FNV-1 over the 8 low-order bytes, on Java longs, then Math.abs.
    The plain byte loop; ``fnv_hash64`` is the fast equivalent (tests compare the two)."""
    h = FNV_OFFSET_BASIS_64
    v = value & MASK_64
    for _ in range(8):
        h ^= v & 0xFF
        v >>= 8
        h = (h * FNV_PRIME_64) & MASK_64
    return java_abs(h)


def java_abs(h: int) -> int:
    """Math.abs of the 64-bit pattern ``h`` read as a Java long (Long.MIN_VALUE stays negative)."""
    signed = h - (1 << 64) if h >> 63 else h
    return abs(signed) if signed != -(1 << 63) else signed


def _low16_states() -> list[int]:
    """FNV-1 state after the two low-order bytes, for each of their 65536 values (about 3 MB)."""
    first = [((FNV_OFFSET_BASIS_64 ^ b0) * FNV_PRIME_64) & MASK_64 for b0 in range(256)]
    table = [0] * 65536
    for b1 in range(256):
        base = b1 << 8
        for b0 in range(256):
            table[base | b0] = ((first[b0] ^ b1) * FNV_PRIME_64) & MASK_64
    return table


_LOW16: list[int] = []
_PRIME_POW4 = pow(FNV_PRIME_64, 4, 1 << 64)  # four zero bytes: XOR with 0 is a no-op, only the products stay


def fnv_hash64(value: int) -> int:
    """YCSB's Utils.fnvhash64: FNV-1 over the 8 low-order bytes, on Java longs, then Math.abs.

    Hot path (every key): the state after the two low bytes comes from a fixed table, and for
    values below 2^32 the four zero high bytes collapse into one multiplication by prime^4.
    """
    if not _LOW16:
        _LOW16.extend(_low16_states())
    v = value & MASK_64
    h = ((_LOW16[v & 0xFFFF] ^ ((v >> 16) & 0xFF)) * FNV_PRIME_64) & MASK_64
    h = ((h ^ ((v >> 24) & 0xFF)) * FNV_PRIME_64) & MASK_64
    high = v >> 32
    if high:
        for _ in range(4):
            h = ((h ^ (high & 0xFF)) * FNV_PRIME_64) & MASK_64
            high >>= 8
    else:
        h = (h * _PRIME_POW4) & MASK_64
    return java_abs(h) if h >> 63 else h


def zeta(n: int, theta: float, start: int = 0, initial: float = 0.0) -> float:
    """sum_{i=start+1..n} 1/i^theta added to ``initial``.

    Summed exactly up to 2 million terms; beyond that, the tail uses the Euler-Maclaurin formula
    (integral plus two correction terms), accurate to ~1e-12 relative for the sizes we meet.
    """
    exact_until = min(n, max(start, 2_000_000))
    total = initial + math.fsum(i**-theta for i in range(start + 1, exact_until + 1))
    if n > exact_until:
        a, b = exact_until, n  # sum over (a, b] = integral + (f(b) - f(a))/2 + (f'(b) - f'(a))/12

        def f(x: float) -> float:
            return math.pow(x, -theta)

        def df(x: float) -> float:
            return -theta * math.pow(x, -theta - 1)

        if abs(theta - 1.0) < 1e-12:
            integral = math.log(b / a)
        else:
            integral = (b ** (1 - theta) - a ** (1 - theta)) / (1 - theta)
        total += integral + (f(b) - f(a)) / 2 + (df(b) - df(a)) / 12
    return total


class ZipfianGenerator:
    """Integers in [base, base + items) with P(rank i) proportional to 1/i^theta (rank 1 = base)."""

    def __init__(
        self,
        rng: random.Random,
        base: int,
        items: int,
        theta: float = ZIPFIAN_CONSTANT,
        zetan: float | None = None,
    ) -> None:
        if items < 1:
            raise ValueError("a Zipfian distribution needs at least one item")
        self.rng = rng
        self.base = base
        self.items = items
        self.theta = theta
        self.zeta2theta = zeta(2, theta)
        self.alpha = 1.0 / (1.0 - theta)
        self.count_for_zeta = items
        self.zetan = zetan if zetan is not None else zeta(items, theta)
        self._eta()

    def _eta(self) -> None:
        self.eta = (1 - (2.0 / self.items) ** (1 - self.theta)) / (1 - self.zeta2theta / self.zetan)

    def grow(self, items: int) -> None:
        """Extend the item count incrementally (the 'latest' distribution grows with inserts)."""
        if items > self.count_for_zeta:
            self.zetan = zeta(items, self.theta, self.count_for_zeta, self.zetan)
            self.count_for_zeta = self.items = items
            self._eta()

    def next(self) -> int:
        u = self.rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < 1.0 + 0.5**self.theta:
            return self.base + 1
        return self.base + int(self.items * (self.eta * u - self.eta + 1) ** self.alpha)

    def block(self, n: int) -> list[int]:
        """``n`` draws, each exactly as ``next`` draws it."""
        r, zetan, base, items = self.rng.random, self.zetan, self.base, self.items
        second, eta, alpha = 1.0 + 0.5**self.theta, self.eta, self.alpha
        return [
            base
            if (uz := u * zetan) < 1.0
            else base + 1
            if uz < second
            else base + int(items * (eta * u - eta + 1) ** alpha)
            for u in [r() for _ in range(n)]
        ]


class ScrambledZipfianGenerator:
    """Zipfian popularity, but the popular items are scattered over [low, high] by hashing."""

    def __init__(self, rng: random.Random, low: int, high: int, theta: float = ZIPFIAN_CONSTANT) -> None:
        self.low = low
        self.items = high - low + 1
        zetan = SCRAMBLED_ZETAN_099 if theta == ZIPFIAN_CONSTANT else zeta(SCRAMBLED_ITEM_COUNT, theta)
        self.gen = ZipfianGenerator(rng, 0, SCRAMBLED_ITEM_COUNT, theta, zetan)
        self._by_rank: dict[int, int] = {}

    def next(self) -> int:
        rank = self.gen.next()
        if rank < RANK_CACHE:  # a popular rank: its record number is hashed once
            number = self._by_rank.get(rank)
            if number is None:
                number = self._by_rank[rank] = self.low + fnv_hash64(rank) % self.items
            return number
        return self.low + fnv_hash64(rank) % self.items

    def block(self, n: int) -> list[int]:
        by_rank, low, items = self._by_rank, self.low, self.items
        out = []
        for rank in self.gen.block(n):
            number = by_rank.get(rank)
            if number is None:
                number = low + fnv_hash64(rank) % items
                if rank < RANK_CACHE:
                    by_rank[rank] = number
            out.append(number)
        return out


class UniformGenerator:
    def __init__(self, rng: random.Random, low: int, high: int) -> None:
        self.low, self.span, self.rng = low, high - low + 1, rng
        # the same draws made in C from the generator's words (_fastloop.uniform_ints), where built
        self._compiled = compiled.uniform_ints() if self.span <= 2**53 else None

    def next(self) -> int:
        return self.low + int(self.rng.random() * self.span)

    def block(self, n: int) -> list[int]:
        if self._compiled is not None:
            words = self.rng.getrandbits(64 * n).to_bytes(8 * n, "little")
            return self._compiled(words, self.low, self.span)  # type: ignore[no-any-return]
        low, span, r, floor = self.low, self.span, self.rng.random, math.floor
        return [low + floor(r() * span) for _ in range(n)]  # floor is int for x >= 0, and cheaper


class SequentialGenerator:
    """low, low+1, ..., high, low, ... (wraps)."""

    def __init__(self, low: int, high: int) -> None:
        self.low, self.span, self.i = low, high - low + 1, 0

    def next(self) -> int:
        value = self.low + self.i % self.span
        self.i += 1
        return value

    def block(self, n: int) -> list[int]:
        low, span, first = self.low, self.span, self.i
        self.i += n
        return [low + i % span for i in range(first, first + n)]


class HotspotGenerator:
    """A fraction ``hot_opn`` of draws land uniformly in the first ``hot_data`` of the range."""

    def __init__(self, rng: random.Random, low: int, high: int, hot_data: float, hot_opn: float) -> None:
        items = high - low + 1
        self.rng, self.low = rng, low
        self.hot = max(1, int(items * hot_data)) if hot_data > 0 else 0
        self.cold = items - self.hot
        self.hot_opn = hot_opn

    def next(self) -> int:
        r = self.rng.random
        if self.cold <= 0 or (self.hot and r() < self.hot_opn):
            return self.low + int(r() * self.hot)
        return self.low + self.hot + int(r() * self.cold)

    def block(self, n: int) -> list[int]:
        draw = self.next
        return [draw() for _ in range(n)]


class ExponentialGenerator:
    """Offsets back from the newest key: ``percentile`` % of draws fall within ``span`` items."""

    def __init__(self, rng: random.Random, percentile: float, span: float) -> None:
        self.rng = rng
        self.gamma = -math.log(1.0 - percentile / 100.0) / span

    def next(self) -> int:
        return int(-math.log(1.0 - self.rng.random()) / self.gamma)

    def block(self, n: int) -> list[int]:
        r, gamma, log, floor = self.rng.random, self.gamma, math.log, math.floor
        return [floor(-log(1.0 - r()) / gamma) for _ in range(n)]


class SkewedLatestGenerator:
    """Recently inserted keys are the most popular: newest - Zipfian rank."""

    def __init__(self, rng: random.Random, newest: int, theta: float = ZIPFIAN_CONSTANT) -> None:
        self.newest = newest
        self.zipf = ZipfianGenerator(rng, 0, max(1, newest + 1), theta)

    def advance(self, newest: int) -> None:
        if newest > self.newest:
            self.newest = newest
            self.zipf.grow(newest + 1)

    def next(self) -> int:
        return self.newest - self.zipf.next()

    def block(self, n: int) -> list[int]:
        newest = self.newest
        return [newest - rank for rank in self.zipf.block(n)]


class DiscreteChooser:
    """Pick one of several labels by weight (the operation mix)."""

    def __init__(self, rng: random.Random, weights: Sequence[tuple[str, float]]) -> None:
        total = sum(w for _, w in weights)
        self.rng = rng
        acc = 0.0
        self.table: list[tuple[float, str]] = []
        for label, w in weights:
            if w > 0:
                acc += w / total
                self.table.append((acc, label))
        if not self.table:
            raise ValueError("no operation has a positive proportion")
        self.table[-1] = (2.0, self.table[-1][1])
        self.edges = [edge for edge, _ in self.table]
        self.labels = [label for _, label in self.table]
        self._compiled = compiled.choose_labels() if len(self.labels) <= 16 else None

    def next(self) -> str:
        if len(self.table) == 1:  # one operation (workload C): no draw needed
            return self.table[0][1]
        u = self.rng.random()
        for edge, label in self.table:
            if u < edge:
                return label
        return self.table[-1][1]  # pragma: no cover - the last edge is 2.0

    def block(self, n: int) -> list[str]:
        """``n`` labels; the first edge above the draw picks, as in ``next`` (in C from the
        generator's words where built: _fastloop.choose_labels)."""
        if len(self.labels) == 1:
            return self.labels * n
        if self._compiled is not None:
            words = self.rng.getrandbits(64 * n).to_bytes(8 * n, "little")
            return self._compiled(words, self.edges, self.labels)  # type: ignore[no-any-return]
        r, edges, labels = self.rng.random, self.edges, self.labels
        return [labels[bisect_right(edges, r())] for _ in range(n)]


class LengthGenerator:
    """Field or scan lengths: constant | uniform | zipfian in [low, high]."""

    def __init__(self, rng: random.Random, kind: str, low: int, high: int) -> None:
        self.kind, self.low, self.high = kind, low, high
        if kind == "uniform":
            self.gen: UniformGenerator | ZipfianGenerator | None = UniformGenerator(rng, low, high)
        elif kind == "zipfian":
            self.gen = ZipfianGenerator(rng, low, high - low + 1)
        else:
            self.gen = None

    def next(self) -> int:
        return self.high if self.gen is None else self.gen.next()
