"""moto's server finds a request's backend in a listing of its package folder; a rehearsal lists the
folder once per process instead of twice per request (rehearse/hooks.py: configure_moto)."""

from __future__ import annotations

import os

import moto
from moto import backends

from benchwright.rehearse.hooks import configure_moto


def test_the_backend_listing_is_the_package_folders_and_is_made_once() -> None:
    folder = os.path.dirname(moto.__file__)
    expected = sorted(
        name
        for name in os.listdir(folder)
        if os.path.isdir(os.path.join(folder, name)) and not name.startswith("__")
    )
    configure_moto()
    configure_moto()  # idempotent: the cache is not wrapped again
    assert list(backends.list_of_moto_modules()) == expected
    assert "stepfunctions" in backends.list_of_moto_modules()
    info = backends.list_of_moto_modules.cache_info()  # type: ignore[attr-defined]
    assert info.misses == 1 and info.hits >= 1
