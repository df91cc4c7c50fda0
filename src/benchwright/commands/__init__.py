"""CLI command families; each module exposes register(subparsers)."""
