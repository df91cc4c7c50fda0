"""uPlot, the report's chart library, read from the installed npm package and inlined at render time.

uPlot is not part of this repository: package.json pins it (``uplot``) and ``npm ci`` (run by
scripts/bootstrap) installs it into node_modules/. Reports are rendered in two places, and both
read the same four files in the same layout:

- a source checkout (local runs, ``benchwright report``): ``<checkout>/node_modules/uplot/``;
- the Lambda asset (FinishRun): infra/bundling.py copies them to ``benchwright/report/vendor/uplot/``.

A missing or differently versioned copy is an error naming the fix, never a report without charts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

UPLOT_VERSION = "1.6.32"  # the pin in package.json (a test keeps the two equal)
UPLOT_FILES = ("package.json", "LICENSE", "dist/uPlot.iife.min.js", "dist/uPlot.min.css")
VENDOR_DIR = Path(__file__).resolve().parent / "vendor" / "uplot"
CHECKOUT_DIR = Path(__file__).resolve().parents[3] / "node_modules" / "uplot"


class AssetError(RuntimeError):
    """The chart library is not where a report can be rendered from."""


@dataclass(frozen=True)
class Uplot:
    version: str
    js: str
    css: str
    license_line: str  # the copyright line of its MIT licence, kept in the report with the code


def candidates() -> list[Path]:
    """Where uPlot is looked for, in order: the Lambda asset's copy, then the checkout's node_modules."""
    return [VENDOR_DIR, CHECKOUT_DIR]


@cache
def uplot() -> Uplot:
    """The installed uPlot; raises AssetError when it is absent or not the pinned version."""
    for root in candidates():
        if all((root / name).is_file() for name in UPLOT_FILES):
            return _read(root)
    where = " or ".join(str(p) for p in candidates())
    raise AssetError(
        f"uPlot {UPLOT_VERSION} (npm package 'uplot', pinned in package.json) is not installed in {where}: "
        "run `npm ci` in the checkout (scripts/bootstrap does)"
    )


def _read(root: Path) -> Uplot:
    version = str(json.loads((root / "package.json").read_text(encoding="utf-8")).get("version"))
    if version != UPLOT_VERSION:
        raise AssetError(f"uPlot in {root} is {version}, the report needs {UPLOT_VERSION}: run `npm ci`")
    licence = (root / "LICENSE").read_text(encoding="utf-8")
    line = next((ln.strip() for ln in licence.splitlines() if ln.strip().startswith("Copyright")), "")
    js = (root / "dist" / "uPlot.iife.min.js").read_text(encoding="utf-8")
    if "</script" in js.lower():  # would end the inline <script> early
        raise AssetError(f"{root}/dist/uPlot.iife.min.js contains '</script': it cannot be inlined")
    return Uplot(version, js, (root / "dist" / "uPlot.min.css").read_text(encoding="utf-8"), line)
