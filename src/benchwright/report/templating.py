"""The one Jinja2 environment of the reports: templates shipped as package data, autoescaping on.

Results carry user strings (spec names, SQL file names, cell ids, error messages); autoescaping
makes every one of them text unless a template marks a value ``|safe`` on purpose (only our own
CSS/JS and the installed uPlot bundle are). Undefined names fail loudly instead of rendering empty.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup


@cache
def environment() -> Environment:
    """Built once per process (the FinishRun Lambda keeps it warm between invocations)."""
    env = Environment(
        loader=PackageLoader("benchwright.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.globals["static"] = static
    return env


def static(name: str) -> Markup:
    """Our own CSS or JavaScript file from templates/, inlined verbatim (not parsed as a template,
    so braces in code need no escaping)."""
    source, _, _ = environment().loader.get_source(environment(), name)  # type: ignore[union-attr]
    return Markup(source)


def render(name: str, **context: Any) -> str:
    """Render ``templates/<name>`` with ``context``."""
    return environment().get_template(name).render(**context)
