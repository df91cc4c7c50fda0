"""The commands of each redis-benchmark test, with redis-benchmark's key and value conventions.

redis-benchmark writes ``__rand_int__`` in a key and, with ``-r N``, replaces it with a random
number in [0, N) printed as 12 zero-padded digits (``key:000000000042``); without ``-r`` the key is
the literal ``key:__rand_int__``. Values are ``-d`` bytes of ``x``. LRANGE tests read a list that is
filled first (redis-benchmark runs an LPUSH pass for that; we fill it, untimed, in ``setup``).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat as forever
from itertools import starmap
from operator import mul

from benchwright.runner.drivers.resp import encode_command

Command = tuple[bytes, ...]

# redis-benchmark's test names (-t), in the order it runs them.
TESTS = (
    "ping_inline",
    "ping_mbulk",
    "set",
    "get",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "hset",
    "spop",
    "zadd",
    "zpopmin",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
    "mset",
    "xadd",
)
# -t names that select several tests, as redis-benchmark reads them
GROUPS = {
    "ping": ("ping_inline", "ping_mbulk"),
    "lrange": ("lrange_100", "lrange_300", "lrange_500", "lrange_600"),
}
# redis-benchmark's titles for the tests whose title is not just the upper-case name (--csv, text)
TITLES = {f"lrange_{n}": f"LRANGE_{n} (first {n} elements)" for n in (100, 300, 500, 600)} | {
    "mset": "MSET (10 keys)"
}
# sent as an inline command, not RESP (redis-benchmark's PING_INLINE); the reply is the same +PONG
INLINE = {"ping_inline": b"PING\r\n"}
LIST_KEY = b"mylist"
LRANGE_FILL = 600  # redis-benchmark pushes this many elements before its LRANGE tests
MSET_KEYS = 10


@dataclass(frozen=True)
class KeySource:
    """Where ``__rand_int__`` comes from: a seeded per-thread RNG over the keyspace (``-r``)."""

    keyspace: int
    rng: random.Random

    def __call__(self, prefix: bytes) -> bytes:
        return prefix + self.digits()

    def digits(self) -> bytes:
        """What replaces ``__rand_int__``: always 12 bytes, so a command's RESP length headers are fixed."""
        if not self.keyspace:
            return b"__rand_int__"
        # redis-benchmark draws random() % keyspace; a float in [0, 1) scaled to the keyspace is as
        # uniform (to 2**-53) and costs half of randrange, which shows at 16 keys per pipeline.
        return b"%012d" % int(self.rng.random() * self.keyspace)


def operation_name(test: str) -> str:
    """The result's operation name for a test: SET, GET, LRANGE_100 ..."""
    return test.upper()


def command_factory(test: str, value: bytes, keys: KeySource) -> Callable[[], Command]:
    """A function producing the next command of ``test`` (fresh random keys on each call)."""
    factories: dict[str, Callable[[], Command]] = {
        "ping_inline": lambda: (b"PING",),  # on the wire inline (INLINE), as redis-benchmark sends it
        "ping_mbulk": lambda: (b"PING",),
        "set": lambda: (b"SET", keys(b"key:"), value),
        "get": lambda: (b"GET", keys(b"key:")),
        "incr": lambda: (b"INCR", keys(b"counter:")),
        "lpush": lambda: (b"LPUSH", LIST_KEY, value),
        "rpush": lambda: (b"RPUSH", LIST_KEY, value),
        "lpop": lambda: (b"LPOP", LIST_KEY),
        "rpop": lambda: (b"RPOP", LIST_KEY),
        "sadd": lambda: (b"SADD", b"myset", keys(b"element:")),
        "hset": lambda: (b"HSET", b"myhash", keys(b"element:"), value),
        "spop": lambda: (b"SPOP", b"myset"),
        "zadd": lambda: (b"ZADD", b"myzset", b"0", keys(b"element:")),
        "zpopmin": lambda: (b"ZPOPMIN", b"myzset"),
        "lrange_100": lambda: (b"LRANGE", LIST_KEY, b"0", b"99"),
        "lrange_300": lambda: (b"LRANGE", LIST_KEY, b"0", b"299"),
        "lrange_500": lambda: (b"LRANGE", LIST_KEY, b"0", b"499"),
        "lrange_600": lambda: (b"LRANGE", LIST_KEY, b"0", b"599"),
        "mset": lambda: (b"MSET", *_mset_pairs(keys, value)),
        "xadd": lambda: (b"XADD", b"mystream", b"*", b"myfield", value),
    }
    return factories[test]


_SLOT = b"\x01" * 12  # stands for a key's 12 random characters while the RESP template is built


class _Slots(KeySource):
    def digits(self) -> bytes:
        return _SLOT


def resp_factory(test: str, value: bytes, keys: KeySource, repeat: int = 1) -> Callable[[], bytes]:
    """Like ``command_factory`` but the commands come out already in RESP, ``repeat`` of them at a
    time (one pipeline): ``resp_blocks``, one request at a time."""
    make = resp_blocks(test, value, keys, repeat)
    return lambda: make(1)[0]


def resp_blocks(test: str, value: bytes, keys: KeySource, repeat: int = 1) -> Callable[[int], list[bytes]]:
    """A function making the next ``n`` requests of ``test`` (pipelines of ``repeat`` commands) in
    RESP, as redis-benchmark keeps its commands: the template is encoded once and only the keys'
    digits change, filled in one formatting step per request, in the same order of random draws as
    ``command_factory`` (so both give the same commands from the same seed). A block of requests is
    one list comprehension: no Python call per request."""
    if test in INLINE:
        inline = INLINE[test] * repeat
        return lambda n: [inline] * n
    template = encode_command(command_factory(test, value, _Slots(1, random.Random(0)))())
    assert template is not None, "redis-bench commands are bytes"
    layout = template.replace(b"%", b"%%").replace(_SLOT, b"%s") * repeat
    count = template.count(_SLOT) * repeat
    if not count:
        constant = template * repeat
        return lambda n: [constant] * n
    if type(keys) is KeySource and 0 < keys.keyspace <= KEYSPACE_MAX and count == repeat:
        from benchwright.runner.compiled import key_pipelines

        compiled = key_pipelines()
        if compiled is not None:
            return _compiled_blocks(compiled, template, keys, repeat)
    if type(keys) is KeySource and 0 < keys.keyspace <= DIGIT_TABLE_MAX and count == repeat:
        return _joined_blocks(template, keys, repeat)
    if type(keys) is KeySource and keys.keyspace:  # the common case, inlined
        # the digits are formatted by the one % of the whole request (%012d in the layout, as
        # KeySource.digits formats them), not one bytes object per key first
        numbered = template.replace(b"%", b"%%").replace(_SLOT, b"%012d") * repeat
        draw, keyspace, floor = keys.rng.random, keys.keyspace, math.floor  # floor: int for x >= 0, cheaper
        if count == 1:
            return lambda n: [numbered % floor(draw() * keyspace) for _ in range(n)]
        return lambda n: [
            numbered % tuple([floor(draw() * keyspace) for _ in range(count)]) for _ in range(n)
        ]
    digits = keys.digits
    return lambda n: [layout % tuple([digits() for _ in range(count)]) for _ in range(n)]


DIGIT_TABLE_MAX = 1 << 17  # keyspaces up to this get their keys' digits formatted once (7 MB at most)


@functools.lru_cache(maxsize=2)
def digit_table(keyspace: int) -> list[bytes]:
    """Every key's 12 digits (``KeySource.digits``), formatted once per process and shared by its
    connections: a lookup instead of formatting a number per command (issue 12: at -P 16 formatting
    was a third of the client's CPU per request). Made before the measured window
    (``RedisBench.prepare``)."""
    return [b"%012d" % i for i in range(keyspace)]


KEYSPACE_MAX = 10**12  # keys below it have 12 digits


def _compiled_blocks(
    compiled: Callable[..., list[bytes]], template: bytes, keys: KeySource, size: int
) -> Callable[[int], list[bytes]]:
    """``resp_blocks`` for a command with one random key, made in C (``_fastloop.key_pipelines``):
    Python's generator gives the block's random words in one call (``getrandbits``, which hands out
    the same 32-bit outputs two ``random()`` calls consume), and C turns them into the keys
    ``floor(random() * keyspace)`` and the requests. The same keys as ``command_factory``'s from the
    same seed, the generator left in the same state; at -P 16 a fifth of the Python draws' cost."""
    head, tail = template.split(_SLOT)
    between = tail + head
    bits, keyspace = keys.rng.getrandbits, keys.keyspace

    def make(n: int) -> list[bytes]:
        nbits = n * size * 64  # two 32-bit words per key
        return compiled(bits(nbits).to_bytes(nbits // 8, "little"), head, between, tail, size, keyspace)

    return make


def _joined_blocks(template: bytes, keys: KeySource, size: int) -> Callable[[int], list[bytes]]:
    """``resp_blocks`` for a command with one random key (GET, SET, INCR ...) and a keyspace with a
    ``digit_table``: a pipeline is the template's head, the keys' digits joined by the constant
    between two of them (the template's tail, then its head) and the tail. The draws are made at C
    level, in the order ``command_factory`` makes them."""
    head, tail = template.split(_SLOT)
    between = tail + head
    pick = digit_table(keys.keyspace).__getitem__
    draw, keyspace = keys.rng.random, keys.keyspace

    def make(n: int) -> list[bytes]:
        draws = map(mul, starmap(draw, forever((), n * size)), forever(keyspace))
        digits = list(map(pick, map(math.floor, draws)))
        if size == 1:
            return [head + d + tail for d in digits]
        join = between.join
        return [head + join(digits[i : i + size]) + tail for i in range(0, n * size, size)]

    return make


def _mset_pairs(keys: KeySource, value: bytes) -> list[bytes]:
    pairs: list[bytes] = []
    for _ in range(MSET_KEYS):
        pairs += [keys(b"key:"), value]
    return pairs
