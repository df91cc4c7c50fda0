"""A pgbench script read into commands: SQL statements (ended by `;`, over several lines if need
be) and the meta-commands `\\set NAME EXPR` and `\\sleep N [us|ms|s]`.

pgbench's built-in scripts are kept here as the text its documentation gives, so a mix of `-b` and
`-f` scripts runs on one executor. A meta-command the mirror does not implement (`\\setshell`,
`\\shell`, `\\if`, `\\gset`, pipelines ...) is refused when the script is read, naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchwright.errors import SpecError
from benchwright.runner.workloads.pgscript import expr

VARIABLE = re.compile(r"(?<!:):([A-Za-z_][A-Za-z0-9_]*)")
SLEEP_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
MAX_SCRIPT_CHARS = 1 << 20

TPCB_LIKE = """\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"""
SIMPLE_UPDATE = """\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"""
SELECT_ONLY = """\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
"""
BUILTIN_TEXT = {"tpcb-like": TPCB_LIKE, "simple-update": SIMPLE_UPDATE, "select-only": SELECT_ONLY}


@dataclass(frozen=True)
class Command:
    """One line of pgbench's -r report: ``kind`` sql, set or sleep; ``shown`` is its text there."""

    kind: str
    shown: str
    sql: str = ""  # sql: the statement, without its ';'
    names: tuple[str, ...] = ()  # sql: the :variables it uses, in order; set: the one it assigns
    value: expr.Node | None = None  # set: the expression; sleep: the duration expression
    unit_s: float = 1.0  # sleep: seconds per unit


@dataclass(frozen=True)
class Script:
    name: str  # pgbench's: the file name as given, or "<builtin: ...>"
    weight: int
    commands: tuple[Command, ...] = field(default=())


def parse_script(text: str, name: str, weight: int = 1) -> Script:
    """The commands of a script's text; a script with none is refused, as pgbench does."""
    if len(text) > MAX_SCRIPT_CHARS:
        raise SpecError(name, f"the script is over {MAX_SCRIPT_CHARS} characters")
    commands: list[Command] = []
    for line_no, chunk, meta in _chunks(text):
        where = f"{name}:{line_no}"
        commands.append(_meta(chunk, where) if meta else _sql(chunk))
    if not commands:
        raise SpecError(name, "the script contains no commands")
    return Script(name, weight, tuple(commands))


def _chunks(text: str) -> list[tuple[int, str, bool]]:
    """(first line, text, is a meta-command): meta-commands run to the end of their line (a
    trailing backslash continues it); SQL runs to a ';' outside quotes; `--` comments are dropped."""
    out: list[tuple[int, str, bool]] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            line += ch == "\n"
            i += 1
        elif text.startswith("--", i):
            i = _line_end(text, i)
        elif ch == "\\":
            start, parts = line, []
            while True:
                end = _line_end(text, i)
                piece = text[i:end]
                if piece.endswith("\\"):
                    parts.append(piece[:-1])
                    i, line = end + 1, line + 1
                    continue
                parts.append(piece)
                i = end
                break
            out.append((start, " ".join(parts).strip(), True))
        else:
            start, end, lines = line, *_statement_end(text, i)
            out.append((start, text[i:end].strip().rstrip(";").strip(), False))
            i, line = end, line + lines
    return out


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _statement_end(text: str, i: int) -> tuple[int, int]:
    """Where the SQL statement starting at ``i`` ends (after its ';', or the text's end) and the
    newlines it spans; quotes and comments are skipped over."""
    quote: str | None = None
    lines = 0
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            lines += 1
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif text.startswith("--", i):
            i = _line_end(text, i)
            continue
        elif ch == ";":
            return i + 1, lines
        i += 1
    return i, lines


def _sql(statement: str) -> Command:
    names = tuple(m.group(1) for m in VARIABLE.finditer(statement))
    return Command("sql", statement.split("\n", 1)[0].strip() + ("" if "\n" in statement else ";"),
                   sql=statement, names=names)  # fmt: skip


def _meta(line: str, where: str) -> Command:
    word, _, rest = line[1:].partition(" ")
    word = word.lower()
    rest = rest.strip()
    if word == "set":
        name, _, expression = rest.partition(" ")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise SpecError(where, f"\\set: invalid variable name {name!r}")
        return Command("set", line, names=(name,), value=expr.parse(expression, where))
    if word == "sleep":
        amount, _, unit = rest.partition(" ")
        unit = unit.strip() or "s"
        if unit not in SLEEP_UNITS:
            raise SpecError(where, f"\\sleep: unknown time unit {unit!r} (us, ms or s)")
        if not (amount.startswith(":") or amount.isdigit()):
            raise SpecError(where, f"\\sleep: expected an integer or a :variable, got {amount!r}")
        return Command("sleep", line, value=expr.parse(amount, where), unit_s=SLEEP_UNITS[unit])
    raise SpecError(where, f"meta-command \\{word} is not implemented by Benchwright's mirror")
