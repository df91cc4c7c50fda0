"""Run a file of SQL statements from N clients for T seconds (workload "sql"), like ysql_bench / pgbench -f.

Properties:
  sql.script      the statements (the CLI reads them from -f FILE; carried as text so a subprocess
                  or a container needs no file); or sql.file, a path read by every worker
  sql.init        statements run once before the phase (e.g. CREATE TABLE IF NOT EXISTS ...)
  sql.transaction true: wrap each pass through the script in one transaction (default false)
Substitutions, drawn afresh for every execution and sent as bound parameters (never pasted in):
  {{uuid}}            a random version-4 UUID as text
  {{int:LOW:HIGH}}    a random integer, LOW <= n <= HIGH
  {{string:LEN}}      LEN random letters and digits
One operation is one pass through the whole script.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
import string
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from benchwright.errors import SpecError
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver, SqlDriver
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, register
from benchwright.runner.workloads.sqlscript.descriptor import DESCRIPTOR
from benchwright.runner.workloads.sqlscript.sqlkit import percentiles_ms, sql_driver, transaction

CREATED = re.compile(r"create\s+table\s+(?:if\s+not\s+exists\s+)?[`\"]?(\w+)", re.IGNORECASE)
PLACEHOLDER = re.compile(r"\{\{\s*([^}]*?)\s*\}\}")
ALPHABET = string.ascii_letters + string.digits
Maker = Callable[[random.Random], Any]


def split_statements(text: str) -> list[tuple[int, str]]:
    """Statements separated by ';' (outside quotes), with their first line number; -- comments dropped."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    quote: str | None = None
    line = start = 1
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None and text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if quote:
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == ";":
            if current:
                out.append((start, "".join(current).strip()))
            current = []
            i += 1
            continue
        if current or not ch.isspace():
            if not current:
                start = line
            current.append(ch)
        if ch == "\n":
            line += 1
        i += 1
    if current and "".join(current).strip():
        out.append((start, "".join(current).strip()))
    return out


def _maker(spec: str, where: str) -> Maker:
    parts = spec.split(":")
    kind = parts[0].strip().lower()
    try:
        if kind == "uuid" and len(parts) == 1:
            return lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4))
        if kind == "int" and len(parts) == 3:
            low, high = int(parts[1]), int(parts[2])
            if low > high:
                raise SpecError(where, f"{{{{{spec}}}}}: LOW is greater than HIGH")
            return lambda r: r.randint(low, high)
        if kind == "string" and len(parts) == 2:
            length = int(parts[1])
            if length < 0:
                raise SpecError(where, f"{{{{{spec}}}}}: negative length")
            return lambda r: "".join(r.choices(ALPHABET, k=length))
    except ValueError:
        raise SpecError(where, f"{{{{{spec}}}}}: the bounds must be integers") from None
    raise SpecError(
        where,
        f"unknown substitution {{{{{spec}}}}} (use {{{{uuid}}}}, {{{{int:LOW:HIGH}}}}, {{{{string:LEN}}}})",
    )


def compile_script(text: str, source: str) -> list[tuple[str, list[Maker]]]:
    """Each statement as (sql with %s placeholders, value makers); refuses unknown substitutions."""
    compiled = []
    for line, stmt in split_statements(text):
        makers: list[Maker] = []
        where = f"{source}:{line}"

        def replace(m: re.Match[str], makers: list[Maker] = makers, where: str = where) -> str:
            makers.append(_maker(m.group(1), where))
            return "\0"

        sql = PLACEHOLDER.sub(replace, stmt)
        if makers:
            sql = sql.replace("%", "%%").replace("\0", "%s")
        compiled.append((sql, makers))
    if not compiled:
        raise SpecError(source, "the SQL script has no statements")
    return compiled


def script_text(props: dict[str, str], key: str, file_key: str) -> tuple[str, str] | None:
    if props.get(key):
        return props[key], props.get(file_key) or key
    path = props.get(file_key)
    if not path:
        return None
    from benchwright.yamlload import read_text  # regular, bounded, UTF-8, never blocks on a FIFO

    try:
        return read_text(Path(path), "SQL file", 1 << 20), path
    except SpecError as exc:
        raise SpecError(file_key, f"{path}: {exc.detail}") from None


@register
class SqlScriptWorkload(Workload):
    name: ClassVar[str] = "sql"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.SQL
    phases: ClassVar[tuple[str, ...]] = ("run",)
    dataset_in_run: ClassVar[bool] = True  # the init makes the tables
    description: ClassVar[str] = "a file of SQL statements with random substitutions, N clients for T seconds"

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        found = script_text(self.properties, "sql.script", "sql.file")
        if found is None:
            raise SpecError("sql.file", "no SQL script: give -f FILE (property sql.file or sql.script)")
        self.statements = compile_script(*found)
        init = script_text(self.properties, "sql.init", "sql.init_file")
        self.init = compile_script(*init) if init else []
        self.in_transaction = self.properties.get("sql.transaction", "false").lower() in (
            "1",
            "true",
            "yes",
            "on",
        )

    def dataset(self, engine: str, phase: str) -> DatasetIdentity:
        """What the init sets up: the tables its CREATE TABLE statements name and a digest of its
        text (the same init on an existing table keeps it; another init starts afresh)."""
        text = "\n".join(sql for sql, _ in self.init)
        tables = tuple(dict.fromkeys(m.group(1).lower() for m in CREATED.finditer(text)))
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return DatasetIdentity("sql", tables, {}, {"init": digest})

    def setup(self, driver: Driver, phase: str) -> None:
        db = sql_driver(driver, self.name)
        rnd = random.Random()
        for sql, makers in self.init:
            db.execute(sql, [m(rnd) for m in makers])

    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        db = sql_driver(driver, self.name)
        rnd = random.Random(thread.seed)
        while True:
            bound = [(sql, [m(rnd) for m in makers]) for sql, makers in self.statements]
            yield "script", functools.partial(self._pass, db, bound)

    def _pass(self, db: SqlDriver, bound: list[tuple[str, list[Any]]]) -> Status:
        def body() -> None:
            for sql, params in bound:
                if sql.lstrip()[:6].upper() == "SELECT":
                    db.fetch_count(sql, params)
                else:
                    db.execute(sql, params)

        if self.in_transaction:
            return transaction(db, body)
        body()
        return Status.OK

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        summary = result.operations.get("script")
        passes = summary.statuses.get("OK", 0) if summary else 0
        runtime_s = max(result.runtime_ms / 1000, 1e-9)
        result.extra.update(
            statements_per_pass=len(self.statements),
            passes=passes,
            statements=passes * len(self.statements),
            tps=round(passes / runtime_s, 3),
            statements_per_second=round(passes * len(self.statements) / runtime_s, 3),
            latency_ms=percentiles_ms(summary) if summary else {},
        )
