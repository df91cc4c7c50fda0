"""TPC-C's random inputs (clause 2.1.6 and 4.3.2): NURand, last names, a-strings and n-strings.

Random text is sliced from one precomputed pool per generator: building every character with
``random.choice`` would make the loader the bottleneck, and the spec only asks for random lengths
and a character set, not independent characters.
"""

from __future__ import annotations

import random
import string
from decimal import Decimal

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
# The run-time C for last names must differ from the load-time one by 65..119, not 96 or 112 (2.1.6.1).
C_LAST_LOAD = 157
C_LAST_RUN = 223
C_ID = 259
C_OL_I_ID = 7911
ALPHA = string.ascii_letters + string.digits
POOL_SIZE = 1 << 16


def last_name(number: int) -> str:
    """Customer last name from a number 0..999: three syllables by its digits (4.3.2.3)."""
    return SYLLABLES[number // 100] + SYLLABLES[(number // 10) % 10] + SYLLABLES[number % 10]


class TpccRandom:
    """All of TPC-C's random choices for one thread (deterministic from the seed)."""

    def __init__(self, seed: int, c_last: int = C_LAST_RUN) -> None:
        self.r = random.Random(seed)
        self.c_last = c_last
        self._alpha = "".join(self.r.choice(ALPHA) for _ in range(POOL_SIZE))
        self._digits = "".join(self.r.choice(string.digits) for _ in range(POOL_SIZE))

    def uniform(self, low: int, high: int) -> int:
        return self.r.randint(low, high)

    def nurand(self, a: int, x: int, y: int) -> int:
        """Non-uniform random (2.1.6): ((rand(0,A) | rand(x,y)) + C) % (y-x+1) + x."""
        c = {255: self.c_last, 1023: C_ID, 8191: C_OL_I_ID}[a]
        return (((self.r.randint(0, a) | self.r.randint(x, y)) + c) % (y - x + 1)) + x

    def customer_id(self) -> int:
        return self.nurand(1023, 1, 3000)

    def item_id(self) -> int:
        return self.nurand(8191, 1, 100_000)

    def last_name_run(self) -> str:
        return last_name(self.nurand(255, 0, 999))

    def astring(self, low: int, high: int) -> str:
        n = self.r.randint(low, high)
        start = self.r.randrange(POOL_SIZE - n)
        return self._alpha[start : start + n]

    def nstring(self, low: int, high: int) -> str:
        n = self.r.randint(low, high)
        start = self.r.randrange(POOL_SIZE - n)
        return self._digits[start : start + n]

    def zip_code(self) -> str:
        return self.nstring(4, 4) + "11111"

    def data_with_original(self) -> str:
        """i_data / s_data: 26..50 characters, 10% of them containing "ORIGINAL" (4.3.3.1)."""
        data = self.astring(26, 50)
        if self.r.randrange(10) == 0:
            pos = self.r.randrange(len(data) - 8)
            data = data[:pos] + "ORIGINAL" + data[pos + 8 :]
        return data

    def money(self, low_cents: int, high_cents: int) -> Decimal:
        """An exact amount: floats would make W_YTD = sum(D_YTD) (condition 1) drift."""
        return Decimal(self.r.randint(low_cents, high_cents)) / 100
