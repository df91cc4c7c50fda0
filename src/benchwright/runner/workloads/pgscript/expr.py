"""pgbench's `\\set` expressions: parsed once when the script is read, evaluated per transaction.

The arithmetic pgbench scripts use: integer and double constants, `:variables`, unary minus,
`+ - * / %` with pgbench's rules (integer division truncates toward zero, `%` keeps the dividend's
sign, a double operand makes the result double, integer overflow is an error) and parentheses; the
functions abs, double, int, greatest, least, pi, sqrt, ln, exp, pow/power, mod and the random family
(random, random_gaussian, random_exponential, random_zipfian) with pgbench's documented argument
checks. Anything else (comparisons, boolean logic, CASE, hash, permute) is refused when the script is
read, naming the word, so a script never runs with a different meaning.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from benchwright.errors import SpecError

Value = int | float
Env = Mapping[str, Value | str]
Node = Callable[[Env, random.Random], Value]

TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)"
    r"|:(?P<var>[A-Za-z_][A-Za-z0-9_]*)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[-+*/%(),])|(?P<bad>\S))"
)
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
MAX_ZIPF_DRAWS = 1_000_000  # the rejection sampler's bound: its expected draws are a handful
REFUSED = {"hash", "hash_fnv1a", "hash_murmur2", "permute", "case", "debug", "not", "and", "or"}


class ExprError(SpecError):
    """A script's expression cannot be read or evaluated (names the script line)."""


@dataclass(frozen=True)
class _Tokens:
    items: list[tuple[str, str]]
    where: str


def parse(text: str, where: str) -> Node:
    """The expression of one `\\set` line as a function of (variables, random generator)."""
    tokens = _tokenize(text, where)
    node, rest = _sum(tokens, 0)
    if rest != len(tokens.items):
        raise ExprError(where, f"unexpected {tokens.items[rest][1]!r} in expression {text!r}")
    return node


def _tokenize(text: str, where: str) -> _Tokens:
    items: list[tuple[str, str]] = []
    for found in TOKEN.finditer(text):
        kind = found.lastgroup
        if kind is None:
            continue
        word = found.group(kind)
        if kind == "bad":
            raise ExprError(where, f"operator {word!r} is not implemented by Benchwright's mirror")
        items.append((kind, word))
    if not items:
        raise ExprError(where, "missing expression")
    return _Tokens(items, where)


def _sum(t: _Tokens, i: int) -> tuple[Node, int]:
    left, i = _product(t, i)
    while i < len(t.items) and t.items[i][1] in "+-" and t.items[i][0] == "op":
        op = t.items[i][1]
        right, i = _product(t, i + 1)
        left = _binary(op, left, right, t.where)
    return left, i


def _product(t: _Tokens, i: int) -> tuple[Node, int]:
    left, i = _unary(t, i)
    while i < len(t.items) and t.items[i][0] == "op" and t.items[i][1] in "*/%":
        op = t.items[i][1]
        right, i = _unary(t, i + 1)
        left = _binary(op, left, right, t.where)
    return left, i


def _unary(t: _Tokens, i: int) -> tuple[Node, int]:
    if i < len(t.items) and t.items[i] == ("op", "-"):
        inner, i = _unary(t, i + 1)
        where = t.where
        return (lambda env, rng: _checked(-inner(env, rng), where)), i
    if i < len(t.items) and t.items[i] == ("op", "+"):
        return _unary(t, i + 1)
    return _primary(t, i)


def _primary(t: _Tokens, i: int) -> tuple[Node, int]:
    if i >= len(t.items):
        raise ExprError(t.where, "the expression ends too early")
    kind, word = t.items[i]
    if kind == "num":
        value: Value = float(word) if any(c in word for c in ".eE") else int(word)
        return (lambda env, rng: value), i + 1
    if kind == "var":
        return _variable(word, t.where), i + 1
    if kind == "op" and word == "(":
        node, i = _sum(t, i + 1)
        return node, _expect(t, i, ")")
    if kind == "name":
        return _call(t, i)
    raise ExprError(t.where, f"unexpected {word!r}")


def _expect(t: _Tokens, i: int, word: str) -> int:
    if i >= len(t.items) or t.items[i] != ("op", word):
        raise ExprError(t.where, f"expected {word!r}")
    return i + 1


def _call(t: _Tokens, i: int) -> tuple[Node, int]:
    name = t.items[i][1].lower()
    if name in REFUSED or name not in FUNCTIONS:
        raise ExprError(t.where, f"function or keyword {name!r} is not implemented by Benchwright's mirror")
    args: list[Node] = []
    i = _expect(t, i + 1, "(")
    if i < len(t.items) and t.items[i] == ("op", ")"):
        i += 1
    else:
        while True:
            node, i = _sum(t, i)
            args.append(node)
            if i < len(t.items) and t.items[i] == ("op", ","):
                i += 1
                continue
            i = _expect(t, i, ")")
            break
    arity, fn = FUNCTIONS[name]
    if len(args) < abs(arity) or (arity >= 0 and len(args) != arity):
        raise ExprError(t.where, f"{name}() takes {abs(arity)} argument(s), got {len(args)}")
    where = t.where
    return (lambda env, rng: fn([a(env, rng) for a in args], rng, where)), i


def _variable(name: str, where: str) -> Node:
    def get(env: Env, rng: random.Random) -> Value:
        try:
            value = env[name]
        except KeyError:
            raise ExprError(where, f"undefined variable {name!r}") from None
        if isinstance(value, str):
            return _number(value, where)
        return value

    return get


def _number(text: str, where: str) -> Value:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ExprError(where, f"the value {text!r} is not a number") from None


def _checked(value: Value, where: str) -> Value:
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        raise ExprError(where, "bigint out of range")
    return value


def _binary(op: str, left: Node, right: Node, where: str) -> Node:
    def apply(env: Env, rng: random.Random) -> Value:
        a, b = left(env, rng), right(env, rng)
        if op == "+":
            return _checked(a + b, where)
        if op == "-":
            return _checked(a - b, where)
        if op == "*":
            return _checked(a * b, where)
        if b == 0:
            raise ExprError(where, "division by zero")
        if isinstance(a, float) or isinstance(b, float):
            return a / b if op == "/" else math.fmod(a, b)
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C: toward zero
        return _checked(quotient, where) if op == "/" else a - b * quotient

    return apply


def _ints(args: list[Value], name: str, where: str) -> list[int]:
    if any(not isinstance(a, int) for a in args):
        raise ExprError(where, f"{name}() takes integer bounds")
    return [int(a) for a in args]


def _bounds(args: list[Value], name: str, where: str) -> tuple[int, int]:
    low, high = _ints(args[:2], name, where)
    if low > high:
        raise ExprError(where, f"{name}(): empty range given to random")
    return low, high


def _random(args: list[Value], rng: random.Random, where: str) -> Value:
    low, high = _bounds(args, "random", where)
    return rng.randint(low, high)


def _gaussian(args: list[Value], rng: random.Random, where: str) -> Value:
    """A normal draw cut at +-param, scaled onto the range (pgbench: param >= 2)."""
    low, high = _bounds(args, "random_gaussian", where)
    param = float(args[2])
    if param < 2.0:
        raise ExprError(where, f"random_gaussian(): parameter must be at least 2.0, got {param}")
    for _ in range(MAX_ZIPF_DRAWS):
        x = rng.gauss(0.0, 1.0)
        if -param <= x < param:
            return low + int((high - low + 1) * (x + param) / (2.0 * param))
    raise ExprError(where, "random_gaussian(): no draw inside the cut")


def _exponential(args: list[Value], rng: random.Random, where: str) -> Value:
    """An exponential draw cut at the range's end: density exp(-param * (x - low) / (high - low + 1))."""
    low, high = _bounds(args, "random_exponential", where)
    param = float(args[2])
    if param <= 0.0:
        raise ExprError(where, f"random_exponential(): parameter must be greater than zero, got {param}")
    cut = math.exp(-param)
    u = 1.0 - rng.random()  # (0, 1]
    share = -math.log(cut + (1.0 - cut) * u) / param  # [0, 1)
    return low + min(high - low, int((high - low + 1) * share))


def _zipfian(args: list[Value], rng: random.Random, where: str) -> Value:
    """A Zipf draw of exponent s on the range's n values by rejection (Devroye, Non-Uniform Random
    Variate Generation, X.6), pgbench's s in [1.001, 1000]."""
    low, high = _bounds(args, "random_zipfian", where)
    s = float(args[2])
    if not 1.001 <= s <= 1000.0:
        raise ExprError(where, f"random_zipfian(): parameter must be in [1.001, 1000], got {s}")
    n = high - low + 1
    b = 2.0 ** (s - 1.0)
    for _ in range(MAX_ZIPF_DRAWS):
        u, v = 1.0 - rng.random(), rng.random()
        x = math.floor(u ** (-1.0 / (s - 1.0)))
        t = (1.0 + 1.0 / x) ** (s - 1.0)
        if x <= n and v * x * (t - 1.0) / (b - 1.0) <= t / b:
            return low + int(x) - 1
    raise ExprError(where, "random_zipfian(): no draw accepted")


def _math(fn: Callable[[float], float]) -> Callable[[list[Value], random.Random, str], Value]:
    def call(args: list[Value], rng: random.Random, where: str) -> Value:
        try:
            return fn(float(args[0]))
        except ValueError:
            raise ExprError(where, f"math domain error for {args[0]}") from None

    return call


def _int(args: list[Value], rng: random.Random, where: str) -> Value:
    value = args[0]
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError(where, "double to int overflow")
    return _checked(int(value), where)


def _mod(args: list[Value], rng: random.Random, where: str) -> Value:
    return _binary("%", lambda e, r: args[0], lambda e, r: args[1], where)({}, rng)


def _pow(args: list[Value], rng: random.Random, where: str) -> Value:
    try:
        return math.pow(float(args[0]), float(args[1]))
    except (OverflowError, ValueError):
        raise ExprError(where, f"pow({args[0]}, {args[1]}) is out of range") from None


def _extreme(pick: Callable[[list[Value]], Value]) -> Callable[[list[Value], random.Random, str], Value]:
    def call(args: list[Value], rng: random.Random, where: str) -> Value:
        if any(isinstance(a, float) for a in args):
            return float(pick(args))
        return pick(args)

    return call


# name: (arity, function); a negative arity is a minimum
FUNCTIONS: dict[str, tuple[int, Callable[[list[Value], random.Random, str], Value]]] = {
    "abs": (1, lambda a, r, w: abs(a[0])),
    "double": (1, lambda a, r, w: float(a[0])),
    "int": (1, _int),
    "greatest": (-1, _extreme(max)),
    "least": (-1, _extreme(min)),
    "pi": (0, lambda a, r, w: math.pi),
    "sqrt": (1, _math(math.sqrt)),
    "ln": (1, _math(math.log)),
    "exp": (1, _math(math.exp)),
    "pow": (2, _pow),
    "power": (2, _pow),
    "mod": (2, _mod),
    "random": (2, _random),
    "random_gaussian": (3, _gaussian),
    "random_exponential": (3, _exponential),
    "random_zipfian": (3, _zipfian),
}


def text_of(value: Value | str) -> str:
    """A variable's value as pgbench pastes it into SQL: integers as digits, doubles with 15
    significant digits, strings as given."""
    return f"{value:.15g}" if isinstance(value, float) else str(value)
