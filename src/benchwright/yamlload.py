"""Reading spec YAML without its traps: bounded, strict, and the same on every path (CLI, API, submit).

PyYAML's ``safe_load`` keeps the last of two duplicate keys, reads ``on:``/``yes``/``no`` as
booleans (YAML 1.1), expands an alias bomb of a few hundred bytes into gigabytes once a validator
walks it, and raises ``RecursionError`` on deeply nested input. Here duplicate keys and non-string
keys are errors naming the line, only ``true``/``false`` are booleans (YAML 1.2), and the document's
size *after* alias expansion, its nesting depth and the file's size are capped before anything
builds Python objects from it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from benchwright.errors import SpecError

MAX_FILE_BYTES = 1 << 20  # a spec is a page of YAML; 1 MiB leaves room for long matrices
MAX_NODES = 100_000  # scalars + collections after alias expansion
MAX_DEPTH = 40  # nesting of mappings / sequences
MAX_ALIASES = 200


class StrictLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans and duplicate keys refused."""


# YAML 1.2 core schema booleans only: `on`, `off`, `yes`, `no` stay strings.
StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    # flatten_mapping puts the merged (<<) entries first, in priority order, then the mapping's own;
    # a key of its own overrides a merged one (YAML's merge), only its own keys must be unique
    own_count = sum(1 for k, _v in node.value if k.tag != "tag:yaml.org,2002:merge")
    loader.flatten_mapping(node)
    merged_count = len(node.value) - own_count
    out: dict[Any, Any] = {}
    own: set[Any] = set()
    for i, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise SpecError(
                f"line {line}",
                f"the key {key!r} is not a string (quote it: '{key_node.value}':)",
            )
        if i >= merged_count:
            if key in own:
                raise SpecError(
                    f"line {line}", f"duplicate key {key!r} (each key may appear once per mapping)"
                )
            own.add(key)
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def _check_bounds(root: yaml.Node, where: str) -> None:
    """Expanded size and depth, memoised per node so an alias bomb costs its compact size to check."""
    sizes: dict[int, int] = {}
    aliases = 0

    def visit(node: yaml.Node, depth: int) -> int:
        nonlocal aliases
        if depth > MAX_DEPTH:
            raise SpecError(where, f"nested more than {MAX_DEPTH} levels deep")
        key = id(node)
        if key in sizes:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise SpecError(where, f"more than {MAX_ALIASES} aliases (*name)")
            return sizes[key]
        size = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                size += visit(k, depth + 1) + visit(v, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                size += visit(item, depth + 1)
        if size > MAX_NODES:
            raise SpecError(where, f"more than {MAX_NODES:,} values once aliases are expanded")
        sizes[key] = size
        return size

    visit(root, 0)


def loads(text: str, where: str = "spec") -> Any:
    """Parse one YAML document strictly; every problem is a ``SpecError`` naming ``where``:line."""
    if len(text) > MAX_FILE_BYTES:
        raise SpecError(where, f"larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        loader = StrictLoader(text)
    except yaml.YAMLError as exc:  # the reader refuses control characters up front
        raise SpecError(where, f"invalid YAML ({getattr(exc, 'problem', None) or exc})") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_bounds(node, where)
        return loader.construct_document(node)
    except SpecError as exc:
        if exc.field.startswith("line "):
            raise SpecError(f"{where}:{exc.field.removeprefix('line ')}", exc.detail) from None
        raise
    except RecursionError:
        raise SpecError(where, f"nested more than {MAX_DEPTH} levels deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}" if mark is not None else where
        raise SpecError(at, f"invalid YAML ({getattr(exc, 'problem', None) or exc})") from None
    finally:
        loader.dispose()


def read_text(path: str | Path, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """A small regular UTF-8 text file, or a ``SpecError`` naming it (never its content)."""
    p = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore the flag
        with os.fdopen(os.open(p, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise SpecError(str(p), f"the {what} must be a regular file")
            if st.st_size > limit:
                raise SpecError(str(p), f"the {what} is larger than {limit // 1024} KiB")
            data = f.read(limit + 1)
    except OSError as exc:
        raise SpecError(str(p), f"cannot read the {what} ({exc.strerror})") from None
    if len(data) > limit:
        raise SpecError(str(p), f"the {what} is larger than {limit // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(str(p), f"the {what} is not UTF-8 text (byte {exc.start})") from None


def load_file(path: str | Path) -> Any:
    return loads(read_text(path, "spec"), str(path))
