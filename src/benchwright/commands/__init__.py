"""CLI command families; each module exposes register(subparsers)."""

from __future__ import annotations

import argparse
from typing import TypeAlias

# What cli.build_parser hands every module's register(): ``parser.add_subparsers(...)``.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
