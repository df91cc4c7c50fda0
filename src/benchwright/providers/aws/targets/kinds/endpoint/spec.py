"""The ``target`` section of an ``endpoint`` target: an existing database, named by its hosts. The
kind's own model (its descriptor names it: kind.py); it imports only the spec layer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from benchwright.spec._base import DB_IDENT_RE, ENV_NAME_RE, HOST_RE, matching, shown
from benchwright.spec.target_facts import TargetBase, TargetFacts


class EndpointTarget(TargetBase):
    """An existing database: nothing is created or deleted. The password comes from an env var."""

    provider: Literal["endpoint"]
    facts = TargetFacts(
        provision_s=1.0, teardown_s=0.0, ready_timeout_s=60.0,
        events=(), operations=(), scale_key=None,
        owned=False,  # someone else's database
    )  # fmt: skip
    hosts: list[str] = Field(min_length=1)  # host:port, several for client-side spreading
    database: str = Field(default="bench", min_length=1)  # SQL engines; Redis uses ``db``
    user: str = Field(default="bench", min_length=1)
    password_env: str | None = None  # name of the environment variable, never the password
    tls: bool = False
    db: int = Field(default=0, ge=0)  # redis logical database

    _names = field_validator("database", "user")(
        matching(DB_IDENT_RE, "a name of letters, digits, _ . - (starting with a letter or _)")
    )

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, hosts: list[str]) -> list[str]:
        for i, h in enumerate(hosts):
            host, _, port = h.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"hosts[{i}] {shown(h)} must be host:port")
            if len(host) > 253 or not HOST_RE.match(host):
                raise ValueError(f"hosts[{i}] {shown(h)}: the host must be a DNS name or an IP address")
        return hosts

    def named_hosts(self) -> list[str]:
        return self.hosts

    def usable_connections(self) -> tuple[int, str] | None:
        """Someone else's server: what it allows is not known from the spec (as the preflight has
        always held it, whatever its settings say)."""
        return None

    def usable_memory(self) -> tuple[int, str] | None:
        """As its connections: not known from the spec."""
        return None

    @field_validator("password_env")
    @classmethod
    def _password_env(cls, v: str | None) -> str | None:
        if v is not None and not ENV_NAME_RE.match(v):
            raise ValueError("must be the NAME of an environment variable (A-Z, 0-9, _), not the password")
        return v


# the kind's model, as the registry (kinds/__init__.py) reads it
MODEL = EndpointTarget
