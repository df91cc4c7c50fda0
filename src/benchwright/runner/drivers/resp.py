"""RESP, Redis's wire format, written by hand: one request's bytes, shared by the thread driver
(``redis.RedisDriver``), the event-loop requests (``redis_wire``) and redis-benchmark's commands."""

from __future__ import annotations

from collections.abc import Sequence


def encode_command(args: Sequence[bytes | str | int]) -> bytes | None:
    """One command in RESP (``*N`` then ``$len`` + bytes per argument), as redis-py's Encoder would
    write it for bytes, str (UTF-8) and int arguments; None for any other type (redis-py decides)."""
    parts = [b"*%d\r\n" % len(args)]
    append = parts.append
    for arg in args:
        kind = type(arg)
        if kind is bytes:
            data: bytes = arg  # type: ignore[assignment]
        elif kind is str:
            data = arg.encode()  # type: ignore[union-attr]
        elif kind is int:
            data = b"%d" % arg  # type: ignore[str-format]
        else:
            return None
        append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)
