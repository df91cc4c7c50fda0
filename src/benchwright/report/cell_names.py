"""Short cell ids for the terminal: ``keys=100k,reqs=1M,volume=io1/iops=3000`` instead of
``instance_type=t2.micro,volume=type=io1/size_gb=200/iops=3000,redisbench.keyspace=100000,...``.

Display only. The full id (``Cell.cell_id``) stays the key everywhere it is stored or matched:
results, the SQLite store, history, verdicts, compare's pairing, ``show``. A short id is made from
the set of ids shown together (one run's cells, or both runs of a comparison), so it is stable for a
given set and unique within it:
- only the parameters that vary within the set (a setting every cell shares says nothing of which
  cell a row is); a mapping value keeps only its varying entries;
- the key's last dotted part, with well-known names abbreviated the same way everywhere
  (``recordcount`` -> ``records``), integers written exactly with k/M/G (``3k``, ``6.25M``; ``1024`` as it is);
- longer than ``MAX_LEN``, or equal to another cell's short id: cut and suffixed ``~`` plus six hex
  digits of a hash of the full id. Should even that collide, the full ids are shown.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_LEN = 48
HASH_LEN = 6
ABBREVIATIONS = {
    "recordcount": "records",
    "operationcount": "ops",
    "fieldcount": "fields",
    "fieldlength": "fieldlen",
    "command_group": "group",
    "datatype": "type",
    "instance_type": "inst",
    "volume": "vol",
    "instance_class": "class",
    "keyspace": "keys",
    "requests": "reqs",
    "datasize": "size",
    "table_size": "rows",
}
Pairs = list[tuple[str, str]]
CUT = re.compile(rf"~[0-9a-f]{{{HASH_LEN}}}$")


def short_ids(cell_ids: Iterable[str]) -> dict[str, str]:
    """Full id -> short id, for every distinct id given (see the module's docstring)."""
    ids = list(dict.fromkeys(cell_ids))
    parsed = {cell_id: _pairs(cell_id) for cell_id in ids}
    varying = _varying(p for p in parsed.values() if p) if len(ids) > 1 else None
    names = _key_names({k for pairs in parsed.values() for k, _ in pairs or ()})
    shorts: dict[str, str] = {}
    for cell_id, pairs in parsed.items():
        if pairs is None:  # not ``k=v,...`` (``default``): shown as it is
            shorts[cell_id] = (
                cell_id if len(cell_id) <= MAX_LEN else _hashed(cell_id[: MAX_LEN - HASH_LEN - 1], cell_id)
            )
            continue
        kept = [(k, v) for k, v in pairs if varying is None or k in varying]
        text = ",".join(f"{names[k]}={_value(v, varying.get(k) if varying else None)}" for k, v in kept)
        text = text or cell_id
        shorts[cell_id] = text if len(text) <= MAX_LEN else _hashed(text[: MAX_LEN - HASH_LEN - 1], cell_id)
    return _unique(shorts)


def short_id(cell_id: str, among: Iterable[str]) -> str:
    """One cell's short id among the ids shown with it."""
    return short_ids([*among, cell_id])[cell_id]


def cut_ids(names: dict[str, str]) -> dict[str, str]:
    """The short ids that had to be cut (hash-suffixed), with their full ids: a reader needs those
    spelt out, since the cut dropped parameters."""
    return {short: full for full, short in names.items() if short != full and CUT.search(short)}


def _pairs(cell_id: str) -> Pairs | None:
    """``a=1,b=x=y/z=w`` -> [(a, 1), (b, x=y/z=w)]; a piece without ``=`` belongs to the value
    before it (a value with a comma, ``tests=set,get``). None: not such a list."""
    pairs: Pairs = []
    for piece in cell_id.split(","):
        key, eq, value = piece.partition("=")
        if eq and key:
            pairs.append((key, value))
        elif pairs:
            pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]},{piece}")
        else:
            return None
    return pairs or None


def _varying(all_pairs: Iterable[Pairs]) -> dict[str, set[str]]:
    """The keys whose value differs between cells (or that some cells lack), with their values."""
    values: dict[str, list[str | None]] = {}
    listed = [dict(pairs) for pairs in all_pairs]
    for key in {k for pairs in listed for k in pairs}:
        values[key] = [pairs.get(key) for pairs in listed]
    return {k: {v for v in vs if v is not None} for k, vs in values.items() if len(set(vs)) > 1}


def _key_names(keys: set[str]) -> dict[str, str]:
    """Each key's shown name: its last dotted part, abbreviated; the whole key where two would meet."""
    last = {k: k.rsplit(".", 1)[-1] for k in keys}
    names = {k: ABBREVIATIONS.get(s, s) for k, s in last.items()}
    clashes = {n for n in names.values() if list(names.values()).count(n) > 1}
    return {k: (k if n in clashes else n) for k, n in names.items()}


def _value(value: str, others: set[str] | None) -> str:
    """A value as shown: a ``k=v/k=v`` mapping keeps its entries that differ between the cells
    (a ``type``'s value bare), an integer is written short."""
    if "=" not in value:
        return _number(value)
    entries = [e.partition("=") for e in value.split("/")]
    if any(not eq for _, eq, _ in entries):
        return value
    mappings = [set(o.split("/")) for o in others or () if "=" in o]
    if len(mappings) > 1:
        common = set.intersection(*mappings)
        entries = [e for e in entries if f"{e[0]}={e[2]}" not in common] or entries
    return "/".join(v if k == "type" else f"{k}={_number(v)}" for k, _, v in entries)


def _number(text: str) -> str:
    """``62500000`` -> ``62.5M``, ``100000`` -> ``100k``, ``3000`` -> ``3k``: exact, so two values
    never read alike."""
    if not text.isdigit() or text.startswith("0"):
        return text
    n = int(text)
    if n < 10_000 and n % 1000:  # 1024 stays 1024; 3000 is 3k
        return text
    for suffix, unit in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= unit:
            whole, rest = divmod(n, unit)
            digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
            return f"{whole}.{digits}{suffix}" if digits else f"{whole}{suffix}"
    return text


def _hashed(text: str, cell_id: str) -> str:
    return f"{text}~{hashlib.sha256(cell_id.encode()).hexdigest()[:HASH_LEN]}"


def _unique(shorts: dict[str, str]) -> dict[str, str]:
    """Shorts two cells share get the hash suffix; should those still meet, every id is shown whole."""
    seen: dict[str, int] = {}
    for text in shorts.values():
        seen[text] = seen.get(text, 0) + 1
    out = {
        cell_id: text if seen[text] == 1 else _hashed(text[: MAX_LEN - HASH_LEN - 1], cell_id)
        for cell_id, text in shorts.items()
    }
    if len(set(out.values())) < len(out):
        return {cell_id: cell_id for cell_id in out}
    return out
