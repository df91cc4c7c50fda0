"""Readiness probe: "available" in an AWS API is not "accepts connections" (Aurora, EC2 user-data).

A probe is a plain callable so tests (and moto, whose endpoints do not exist) can inject the answer.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

Probe = Callable[[str, int], bool]


def tcp_probe(timeout_s: float = 3.0) -> Probe:
    """True when a TCP connection to host:port is accepted within ``timeout_s``."""

    def probe(host: str, port: int) -> bool:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return True
        except OSError:
            return False

    return probe
