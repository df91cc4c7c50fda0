"""Stand-in servers a rehearsal starts for cloud targets, beyond the local providers' own servers.

- ``NoAuthRedis``: a replication group or cluster without an auth token: Redis with no password.
- ``TlsRedis``: the same with in-transit encryption (TLS only, the rehearsal's certificate, tls.py).
- ``NodeRedis``: a Redis-protocol server on an EC2 target's private address and port (ARDB, KeyDB,
  Valkey or Redis in the spec: always Redis here, named a stand-in of the engine it replaces).
- ``YsqlPostgres``: one PostgreSQL for a YugabyteDB cluster, listening on every node's private address
  at YSQL's port 5433, with YSQL's default role and database (``yugabyte``, no password, as YSQL
  ships with authentication off). PostgreSQL speaks the wire protocol YSQL speaks; it has no tablets.
  A node whose instance is terminated (node_replace) stops answering at its address, and a
  replacement answers at its own (``nodes_down`` / ``nodes_up``: listen_addresses and a clean restart
  on the same data, so the cluster's data survives the loss of a node as RF 3 keeps it). What
  ``yb-admin`` reads and changes (the tserver blacklist) is its ``yb_admin`` state
  (services/ssm.py runs node_replace's commands on it).

EC2 targets get private addresses from 127.0.0.0/8 (the ENI hook in services/ec2.py), so several
targets can use the same template port at once, and the runner container (host network) reaches them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchwright.providers.base import Credentials
from benchwright.providers.local.server_os import USER
from benchwright.providers.local.servers import PostgresServer, RedisServer
from benchwright.rehearse.tls import TlsMaterial
from benchwright.rehearse.yb_admin import Cluster
from benchwright.spec import LocalTarget


def local_target(engine: str, settings: dict[str, Any] | None = None) -> LocalTarget:
    """The local server model a stand-in is built from (engine and server settings)."""
    return LocalTarget(provider="local", engine=engine, settings=settings or {})  # type: ignore[arg-type]


class NoAuthRedis(RedisServer):
    """Redis with no password (the last ``requirepass`` in redis.conf wins).

    ``parameters`` are a cache parameter group's values: each Redis knows is applied with CONFIG SET
    once the server answers (again after every restart, as the service keeps a node on its group);
    the services' own parameters (cache_parameters.SERVICE_ONLY) have no Redis equivalent and are
    listed in ``not_applied``, as is a value Redis refuses (with its reason)."""

    def __init__(self, spec: LocalTarget, run_id: str, parameters: Mapping[str, str] | None = None) -> None:
        super().__init__(spec, run_id=run_id)
        self.parameters = dict(parameters or {})
        self.applied: dict[str, str] = {}
        self.not_applied: dict[str, str] = {}

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        super()._initialise(base, port, password, user)
        with open(base / "redis.conf", "a") as conf:
            conf.write('requirepass ""\n')

    def credentials(self) -> Credentials:
        return Credentials()

    def client(self, timeout_s: float = 2.0) -> Any:
        """A redis-py client of this stand-in (the caller closes it)."""
        import redis

        return redis.Redis(
            host="127.0.0.1",
            port=int(self.handle["port"]),
            socket_timeout=timeout_s,
            socket_connect_timeout=2,
        )

    def _probe(self) -> None:
        client = self.client()
        try:
            client.ping()
            self._apply(client)
        finally:
            client.close()

    def _apply(self, client: Any) -> None:
        import redis

        from benchwright.rehearse.services.cache_parameters import SERVICE_ONLY

        for name, value in self.parameters.items():
            if name in SERVICE_ONLY:
                self.not_applied[name] = "a service parameter with no Redis configuration"
                continue
            try:
                client.config_set(name, value)
                self.applied[name] = value
            except redis.ResponseError as exc:
                self.not_applied[name] = f"Redis refused it: {exc}"

    def config_get(self, names: list[str]) -> dict[str, str]:
        """The server's current values of ``names`` (CONFIG GET)."""
        client = self.client()
        try:
            found: dict[str, str] = {}
            for name in names:
                for key, value in client.config_get(name).items():
                    found[str(key)] = str(value)
            return found
        finally:
            client.close()

    def _before_stop(self) -> None:
        client = self.client(timeout_s=30)
        try:
            client.save()
        finally:
            client.close()


class NodeRedis(NoAuthRedis):
    """No password, bound to an EC2 target's private address and the template's port."""

    def __init__(self, spec: LocalTarget, run_id: str, hosts: list[str], node_port: int) -> None:
        super().__init__(spec, run_id=run_id)
        self.hosts, self.node_port = hosts, node_port

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        super()._initialise(base, port, password, user)
        with open(base / "redis.conf", "a") as conf:  # the last bind / port wins
            conf.write(f"bind {' '.join(self.hosts)}\nport {self.node_port}\n")

    def client(self, timeout_s: float = 2.0) -> Any:
        import redis

        return redis.Redis(
            host=self.hosts[0], port=self.node_port, socket_timeout=timeout_s, socket_connect_timeout=2
        )


class YsqlPostgres(PostgresServer):
    """PostgreSQL on every node address at 5433, role and database ``yugabyte`` without a password."""

    def __init__(self, spec: LocalTarget, run_id: str, hosts: list[str], node_port: int) -> None:
        super().__init__(spec, run_id=run_id)
        self.hosts, self.node_port = hosts, node_port
        self.down: set[str] = set()  # node addresses whose instance is terminated
        self._lock = threading.Lock()
        self.yb_admin = Cluster()  # yb-admin's view: the tserver blacklist (services/ssm.py)

    def listening(self) -> list[str]:
        return [h for h in self.hosts if h not in self.down]

    def nodes_down(self, addresses: list[str]) -> str:
        """Terminated nodes: their addresses stop answering (the others keep the data)."""
        return self._listen(self.down | set(addresses))

    def nodes_up(self, addresses: list[str]) -> str:
        """A replacement node: at a node's old address it answers again; at a new address (a new
        network interface) it is added to the addresses the stand-in listens on."""
        with self._lock:
            added = [a for a in addresses if a not in self.hosts]
            self.hosts = [*self.hosts, *added]
        return self._listen(self.down - set(addresses), force=bool(added))

    def _listen(self, down: set[str], force: bool = False) -> str:
        """PostgreSQL reads listen_addresses at start only: the last line wins, then a clean restart
        on the same data directory (seconds; the rehearsal says so in its events)."""
        with self._lock:
            if (down == self.down and not force) or not set(self.hosts) - down:
                return ""
            self.down = down
            conf = Path(self.handle["dir"]) / "data" / "postgresql.conf"
            with open(conf, "a") as out:
                out.write(f"listen_addresses = '{','.join(self.listening())}'\n")
            return self.trigger("reboot")

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        super()._initialise(base, port, password, user)
        data = base / "data"
        with open(data / "postgresql.conf", "a") as conf:  # the last setting wins
            conf.write(f"listen_addresses = '{','.join(self.hosts)}'\nport = {self.node_port}\n")
        hba = data / "pg_hba.conf"
        hba.write_text("host all yugabyte 127.0.0.0/8 trust\n" + hba.read_text())

    def _probe(self) -> None:
        import psycopg

        host = self.listening()[0]
        conninfo = f"host={host} port={self.node_port} user={USER} dbname=postgres connect_timeout=2"
        with psycopg.connect(conninfo, password=self.credentials().password, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'yugabyte'").fetchone() is None:
                conn.execute("CREATE ROLE yugabyte LOGIN SUPERUSER")
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'yugabyte'").fetchone() is None:
                conn.execute("CREATE DATABASE yugabyte OWNER yugabyte")

    def connection_properties(self) -> dict[str, str]:
        hosts = ",".join(f"{h}:{self.node_port}" for h in self.hosts)
        return {"postgres.url": f"postgresql://yugabyte@{hosts}/yugabyte"}


class TlsRedis(NoAuthRedis):
    """No password, TLS only (``tls-port``; plain ``port 0``), with the rehearsal's certificate."""

    def __init__(
        self, spec: LocalTarget, run_id: str, tls: TlsMaterial, parameters: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(spec, run_id=run_id, parameters=parameters)
        self.tls = tls

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        super()._initialise(base, port, password, user)
        with open(base / "redis.conf", "a") as conf:  # the last port wins
            conf.write(
                f"port 0\ntls-port {port}\ntls-cert-file {self.tls.cert}\ntls-key-file {self.tls.key}\n"
                f"tls-ca-cert-file {self.tls.ca}\ntls-auth-clients no\n"
            )

    def client(self, timeout_s: float = 2.0) -> Any:
        import redis

        return redis.Redis(
            host="127.0.0.1",
            port=int(self.handle["port"]),
            ssl=True,
            ssl_ca_certs=str(self.tls.ca),
            socket_timeout=timeout_s,
            socket_connect_timeout=2,
        )
