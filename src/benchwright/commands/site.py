"""`benchwright site --out DIR`: a static site across nights, one page per benchmark.

Built from the result store (or a rehearsal's records.json): an index of every benchmark with its
verdict across nights and sparklines, and a page per benchmark with its nights, change points and
context markers. Inline CSS and SVG, relative links: open DIR/index.html from disk or a bucket.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchwright.commands import Subparsers
from benchwright.commands.show import add_store_argument, open_existing_store
from benchwright.errors import SpecError
from benchwright.providers.local.sqlite_store import StoreError


def register(sub: Subparsers) -> None:
    p = sub.add_parser("site", help="a static site across nights", description=__doc__.splitlines()[0])
    add_store_argument(p)
    p.add_argument("--records", type=Path, default=None, metavar="FILE",
                   help="a records.json (or a rehearsal's output directory) instead of the store")  # fmt: skip
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="where to write the site")
    p.add_argument("--nights", type=int, default=365, help="newest N runs per benchmark (default 365)")
    p.add_argument("--title", default="Benchwright nightly", help="the site's title")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from benchwright.site.build import write_site

    if args.store is not None and args.records is not None:
        raise SpecError("--records", "give either --store or --records, not both")
    if args.nights < 1:
        raise SpecError("--nights", "must be at least 1 (the newest N runs per benchmark)")
    if args.out.exists() and not args.out.is_dir():
        raise SpecError("--out", f"{args.out} is a file, not a directory")
    with open_existing_store(args.records or args.store) as store:
        if not store.spec_names():
            raise StoreError(f"{store.path}: no runs to build a site from")
        built = write_site(store, args.out, args.nights, args.title)
    print(f"site: {built.pages} benchmark page(s) from {built.runs} run(s): {built.index}")
    return 0
