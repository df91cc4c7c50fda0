"""Enhanced Monitoring and Performance Insights of an RDS stand-in, in AWS's shapes.

Once a second, per monitored instance (CreateDBInstance with MonitoringInterval or
EnablePerformanceInsights):
- every ``interval_s`` seconds, one ``RDSOSMetrics`` document (the fields AWS documents for RDS:
  ``cpuUtilization`` of the stand-in's process tree over the class's vCPUs, ``diskIO`` in 16 KiB
  I/Os as metrics.py counts them, ``loadAverageMinute`` and ``memory`` of the host) is put into
  moto's CloudWatch Logs, group ``RDSOSMetrics``, stream = the instance's DbiResourceId, as RDS's
  monitoring agent does; a field the stand-in cannot measure (steal, queue length) is left out;
- the stand-in's active sessions by wait event (PostgreSQL ``pg_stat_activity``; MariaDB
  ``performance_schema`` threads and their current waits, CPU when none) go to services/pi.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psutil

from benchwright.rehearse.metrics import IO_UNIT
from benchwright.rehearse.services import pi

LOG_GROUP = "RDSOSMetrics"
PG_WAITS = """SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'CPU'), count(*)
FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend'
AND pid <> pg_backend_pid() GROUP BY 1, 2"""
MY_WAITS = """SELECT coalesce(w.EVENT_NAME, 'CPU'), count(*) FROM performance_schema.threads t
LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL
WHERE t.TYPE = 'FOREGROUND' AND t.PROCESSLIST_COMMAND = 'Query' AND t.PROCESSLIST_ID <> CONNECTION_ID()
GROUP BY 1"""
# what RDS sets when Performance Insights manages performance_schema for MySQL/MariaDB
MY_CONSUMERS = [
    "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'events_waits_current'",
    "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME LIKE 'wait/%'",
]


def resource_id(ident: str) -> str:
    """A DbiResourceId of AWS's form, one per instance (moto gives every instance the same one)."""
    import base64
    import hashlib

    digest = base64.b32encode(hashlib.sha256(ident.encode()).digest()).decode()
    return "db-" + digest[:26]


def pg_wait(kind: str, name: str) -> tuple[str, str]:
    """PI's PostgreSQL labels: type ``IO``, name ``IO:DataFileRead``; on CPU both are ``CPU``."""
    return ("CPU", "CPU") if kind == "CPU" else (kind, f"{kind}:{name}")


def my_wait(event: str) -> tuple[str, str]:
    """PI's MySQL labels: ``wait/io/table/sql/handler`` is name ``io/table/sql/handler``, type ``io``."""
    if event == "CPU":
        return ("CPU", "CPU")
    name = event.removeprefix("wait/")
    return (name.split("/", 1)[0], name)


@dataclass
class ServerSampler:
    """One thread per monitored stand-in instance; ``stop`` ends it (bounded by its event)."""

    logs: Any  # boto3 CloudWatch Logs client (moto server)
    instance: str
    resource: str  # its DbiResourceId
    engine: str  # "postgres" | "mysql" (the stand-in's)
    server: Any  # the LocalServer
    vcpus: int
    interval_s: int  # Enhanced Monitoring's interval; 0 = off
    insights: bool
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _conn: Any = None
    documents: int = 0
    samples: int = 0
    failures: int = 0

    def start(self) -> None:
        if self.interval_s:
            with contextlib.suppress(Exception):  # it exists after the first monitored instance
                self.logs.create_log_group(logGroupName=LOG_GROUP)
            self.logs.create_log_stream(logGroupName=LOG_GROUP, logStreamName=self.resource)
        self._thread = threading.Thread(target=self._loop, name=f"rehearse-em-{self.instance}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        pi.forget(self.resource)

    def _read(self) -> tuple[float, float, int, int]:
        user = system = 0.0
        rbytes = wbytes = 0
        for pid in self.server.server_pids():
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                t, io = p.cpu_times(), p.io_counters()
                user, system = user + t.user, system + t.system
                rbytes, wbytes = rbytes + io.read_bytes, wbytes + io.write_bytes
        return user, system, rbytes, wbytes

    def _loop(self) -> None:
        last, last_t, tick = self._read(), time.monotonic(), 0
        while not self._stop.wait(1.0):
            tick += 1
            if self.insights:
                self.sample_waits()
            if self.interval_s and tick % self.interval_s == 0:
                now, now_t = self._read(), time.monotonic()
                self._put(self.document(last, now, max(1e-3, now_t - last_t)))
                last, last_t = now, now_t

    def document(
        self, last: tuple[float, float, int, int], now: tuple[float, float, int, int], dt: float
    ) -> dict[str, Any]:
        """One RDSOSMetrics document over ``dt`` seconds (AWS's field names and units)."""
        share = 100.0 / dt / self.vcpus
        user = max(0.0, now[0] - last[0]) * share
        system = max(0.0, now[1] - last[1]) * share
        memory = psutil.virtual_memory()
        one, five, fifteen = os.getloadavg()
        return {
            "engine": "POSTGRES" if self.engine == "postgres" else "MYSQL",
            "instanceID": self.instance,
            "instanceResourceID": self.resource,
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "version": 1.0,
            "numVCPUs": self.vcpus,
            "cpuUtilization": {"user": user, "system": system, "total": min(100.0, user + system)},
            "loadAverageMinute": {"one": one, "five": five, "fifteen": fifteen},
            "memory": {"total": memory.total // 1024, "free": memory.available // 1024},
            "diskIO": [
                {
                    "device": "rdsdev",
                    "readIOsPS": max(0, now[2] - last[2]) / IO_UNIT / dt,
                    "writeIOsPS": max(0, now[3] - last[3]) / IO_UNIT / dt,
                    "readKbPS": max(0, now[2] - last[2]) / 1024 / dt,
                    "writeKbPS": max(0, now[3] - last[3]) / 1024 / dt,
                }
            ],
        }

    def _put(self, doc: dict[str, Any]) -> None:
        try:
            self.logs.put_log_events(
                logGroupName=LOG_GROUP,
                logStreamName=self.resource,
                logEvents=[{"timestamp": int(time.time() * 1000), "message": json.dumps(doc)}],
            )
            self.documents += 1
        except Exception:  # counted and reported with the stand-in's deletion
            self.failures += 1

    def _connect(self) -> Any:
        port = int(self.server.handle["port"])
        password = self.server.credentials().password
        if self.engine == "postgres":
            import psycopg

            conninfo = f"host=127.0.0.1 port={port} user=bench dbname=postgres connect_timeout=2"
            return psycopg.connect(conninfo, password=password, autocommit=True)
        import MySQLdb

        conn = MySQLdb.connect(
            host="127.0.0.1", port=port, user="bench", password=password or "", connect_timeout=2
        )
        conn.autocommit(True)
        cur = conn.cursor()
        for statement in MY_CONSUMERS:
            cur.execute(statement)
        return conn

    def sample_waits(self) -> None:
        """One second of the stand-in's active sessions by wait event, recorded for services/pi.py."""
        second = int(time.time())
        try:
            if self._conn is None:
                self._conn = self._connect()
            cur = self._conn.cursor()
            cur.execute(PG_WAITS if self.engine == "postgres" else MY_WAITS)
            rows = cur.fetchall()
        except Exception:  # the stand-in restarting (a failover event) or still starting
            self.failures += 1
            self._conn = None
            return
        sessions: dict[tuple[str, str], int] = {}
        for row in rows:
            key = pg_wait(str(row[0]), str(row[1])) if self.engine == "postgres" else my_wait(str(row[0]))
            sessions[key] = sessions.get(key, 0) + int(row[-1])
        pi.record(self.resource, second, sessions)
        self.samples += 1
