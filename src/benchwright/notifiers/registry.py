"""The notifier kinds, by name: the built-in ones listed below, plus any registered at run time.

Adding a kind is its folder plus one line in ``BUILTIN`` (the module holding its ``KIND``). The
modules are imported on first use, by name, so that reading a spec never imports a sender's client.
"""

from __future__ import annotations

import importlib

from benchwright.notifiers.base import NotifierKind

BUILTIN: tuple[str, ...] = (
    "benchwright.notifiers.slack.kind",
)  # fmt: skip
_KINDS: dict[str, NotifierKind] = {}
_BUILT_IN_NAMES: set[str] = set()


def register(kind: NotifierKind) -> NotifierKind:
    """Add a kind; a second kind of the same name is refused (two senders for one section)."""
    _builtins()
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise ValueError(f"notifier kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind
    return kind


def load(module: str) -> NotifierKind:
    """Register the ``KIND`` of ``module`` (a built-in's module, or a plugin's or a test's)."""
    kind = importlib.import_module(module).KIND
    if not isinstance(kind, NotifierKind):
        raise TypeError(f"{module}.KIND is not a NotifierKind")
    return register(kind)


def unregister(name: str) -> None:
    """Remove a kind registered at run time (a test's); the built-in ones stay."""
    _builtins()
    if name in _BUILT_IN_NAMES:
        raise ValueError(f"notifier kind {name!r} is built in")
    _KINDS.pop(name, None)


def kinds() -> dict[str, NotifierKind]:
    """Every registered kind, by name (built-in ones first)."""
    _builtins()
    return dict(_KINDS)


def get(name: str) -> NotifierKind | None:
    return kinds().get(name)


def _builtins() -> None:
    if not _BUILT_IN_NAMES:
        for module in BUILTIN:
            kind = importlib.import_module(module).KIND
            _BUILT_IN_NAMES.add(kind.name)
            _KINDS.setdefault(kind.name, kind)
