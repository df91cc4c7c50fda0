"""Write the API's OpenAPI document: ``python -m benchwright.api.openapi docs/openapi.json``."""

from __future__ import annotations

import sys
from pathlib import Path

from benchwright.api.app import openapi_json


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = openapi_json() + "\n"
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
