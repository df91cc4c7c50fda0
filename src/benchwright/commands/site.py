"""`benchwright site --out DIR`: a static site across nights, one page per benchmark.

Built from the result store (or a rehearsal's records.json): an index of every benchmark with its
verdict across nights and sparklines, and a page per benchmark with its nights, change points and
context markers. Inline CSS and SVG, relative links: open DIR/index.html from disk or a bucket.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
    p.add_argument("--digest", action="store_true", help="print the morning digest (one per suite)")
    p.add_argument("--slack", action="store_true",
                   help="post the digest to Slack (webhook in $BENCHWRIGHT_SLACK_WEBHOOK)")  # fmt: skip
    p.add_argument("--site-url", default=None, metavar="URL",
                   help="the site's address the digest links to (default: the index's path)")  # fmt: skip
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
    if args.digest or args.slack:
        from benchwright.site.digest import digests

        messages = digests(built.judged, args.site_url or str(built.index))
        for message in messages:
            if args.digest:
                print("\n" + "\n".join(_plain(block) for block in message["blocks"]))
            if args.slack:
                from benchwright.providers.local.notify import SlackNotifier

                SlackNotifier().post(message)
    return 0


def _plain(block: dict[str, Any]) -> str:
    """A Block Kit block as terminal text."""
    if "text" in block:
        return str(block["text"]["text"])
    return " ".join(str(e.get("text", "")) for e in block.get("elements", []))
