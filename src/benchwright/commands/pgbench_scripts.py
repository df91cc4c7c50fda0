"""`benchwright pgbench`'s script options: -b NAME[@W], -S, -N, -f FILE[@W], -D NAME=VALUE, -r.

One built-in script alone (no weight, no -D, no -r) keeps the tpcb workload and its compiled event
loop; anything else (a file, a mix, a weight, -D, -r) runs on the pgbench-script workload, which
reads every script, the built-ins as pgbench documents them, into commands run by one executor.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.errors import SpecError, UsageError
from benchwright.runner.workloads.pgscript.script import BUILTIN_TEXT, parse_script
from benchwright.runner.workloads.tpcb.workload import SCRIPTS

PROG = "benchwright pgbench"
MAX_FILE_BYTES = 1 << 20
EXECUTOR_NOTE = (
    "benchwright: note: -r times each command in the client around its own call, on Benchwright's "
    "script executor (client threads), not the compiled event loop the built-in scripts use without -r"
)


@dataclass(frozen=True)
class Chosen:
    """A script as given: a built-in's key or a file's name, its weight, whether a weight was written."""

    name: str
    weight: int
    builtin: bool
    weighted: bool
    text: str = ""


def _weight(spec: str, flag: str) -> tuple[str, int, bool]:
    """NAME@W as pgbench splits it: at the last '@' when what follows is an integer."""
    name, at, weight = spec.rpartition("@")
    if not at or not weight.lstrip("-").isdigit():
        return spec, 1, False
    value = int(weight)
    if value < 0:
        raise UsageError(f"{PROG}: {flag} {spec}: weight specification: invalid weight {value}")
    return name, value, True


def _builtin(spec: str) -> Chosen:
    name, weight, weighted = _weight(spec, "-b")
    if name == "list":
        raise UsageError(f"{PROG}: -b list: available builtin scripts: {', '.join(SCRIPTS)}")
    matches = [s for s in SCRIPTS if s.startswith(name)]
    if len(matches) != 1:
        raise UsageError(
            f"{PROG}: -b {name}: {'ambiguous' if matches else 'no'} builtin script (one of {', '.join(SCRIPTS)})"
        )
    return Chosen(matches[0], weight, True, weighted)


def _file(spec: str) -> Chosen:
    from benchwright.yamlload import read_text

    name, weight, weighted = _weight(spec, "-f")
    try:
        text = read_text(Path(name), "script file", MAX_FILE_BYTES)
    except SpecError as exc:
        raise UsageError(f"{PROG}: -f {name}: {exc.detail}") from None
    return Chosen(name, weight, False, weighted, text)


class ScriptArg(argparse.Action):
    """-b, -f, -S and -N into one list, in command-line order: pgbench numbers its scripts so."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        flag = self.option_strings[0]
        spec = {"-S": "select-only", "-N": "simple-update"}.get(flag, values)
        found = list(getattr(namespace, self.dest, None) or [])
        found.append((flag, spec))
        setattr(namespace, self.dest, found)


def chosen_scripts(opts: argparse.Namespace) -> list[Chosen]:
    """Every script the command line names, in its order; tpcb-like when none is named."""
    chosen = [_file(spec) if kind == "-f" else _builtin(spec) for kind, spec in opts.scripts or []]
    if not chosen:
        chosen = [Chosen("tpcb-like", 1, True, False)]
    if sum(c.weight for c in chosen) <= 0:
        raise UsageError(f"{PROG}: total script weight must not be zero")
    return chosen


def one_builtin(chosen: list[Chosen], opts: argparse.Namespace) -> str | None:
    """The built-in script's name when the tpcb workload can run the command as given."""
    alone = len(chosen) == 1 and chosen[0].builtin and not chosen[0].weighted
    return chosen[0].name if alone and not opts.define and not opts.report_per_command else None


def script_properties(chosen: list[Chosen], opts: argparse.Namespace) -> dict[str, str]:
    """The pgbench-script workload's properties; every script read and checked here, before any
    connection, so a script error names its file and line and nothing runs."""
    items = []
    for c in chosen:
        name = SCRIPTS[c.name] if c.builtin else c.name
        text = BUILTIN_TEXT[c.name] if c.builtin else c.text
        try:
            parse_script(text, name, c.weight)
        except SpecError as exc:
            raise UsageError(f"{PROG}: {exc}") from None
        items.append([name, c.weight, text])
    props = {
        "pgscript.scripts": json.dumps(items),
        "pgscript.protocol": opts.protocol or "simple",
        "pgscript.per_statement": "true" if opts.report_per_command else "false",
    }
    if opts.define:
        props["pgscript.define"] = json.dumps(dict(_define(d) for d in opts.define))
    if not any(c.builtin for c in chosen):  # pgbench: :scale is -s, else 1, with custom scripts only
        props["pgscript.scale"] = str(opts.scale if opts.scale is not None else 1)
    return props


def _define(spec: str) -> tuple[str, str]:
    name, eq, value = spec.partition("=")
    if not eq or not name:
        raise UsageError(f"{PROG}: -D {spec}: invalid variable definition (NAME=VALUE)")
    return name, value
