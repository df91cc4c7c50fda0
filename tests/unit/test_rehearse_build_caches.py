"""The rehearsal's build caches (the synthesized template, the Lambda asset): one builder per entry
across processes (xdist workers start their first rehearsals together), and a template keyed by the
sources, not by where the checkout lives."""

from __future__ import annotations

import fcntl
import threading
from pathlib import Path

import pytest

from benchwright.rehearse.cache_lock import building
from benchwright.rehearse.stack import _inputs_hash


def held(entry: Path) -> bool:
    """Whether another open file holds ``entry``'s build lock (a non-blocking try, released at once)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.with_name(f"{entry.name}.lock"), "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


def test_a_builder_holds_the_entry_until_it_is_done_and_a_second_waits_for_it(tmp_path: Path) -> None:
    entry = tmp_path / "cache" / "template.json"
    assert not held(entry)
    inside, release, second_in = threading.Event(), threading.Event(), threading.Event()
    seen_by_second: list[bool] = []

    def first() -> None:
        with building(entry):
            inside.set()
            release.wait(30)
            entry.write_text("{}")

    def second() -> None:
        with building(entry):
            seen_by_second.append(entry.is_file())  # what a waiting builder checks again
            second_in.set()

    one = threading.Thread(target=first)
    one.start()
    assert inside.wait(30)
    assert held(entry)
    two = threading.Thread(target=second)
    two.start()
    assert held(entry) and not second_in.is_set()  # the first still holds it: the second waits
    release.set()
    one.join(30)
    two.join(30)
    assert seen_by_second == [True]  # it found the first one's entry and would not build again
    assert not held(entry)


def test_the_lock_is_released_when_the_build_fails(tmp_path: Path) -> None:
    entry = tmp_path / "asset"
    with pytest.raises(RuntimeError), building(entry):
        raise RuntimeError("build failed")
    assert not held(entry)


def checkout(
    root: Path, function_text: str = "def handler(e, c): return 1\n", kind_text: str = "ACTIONS = ['rds:X']\n"
) -> Path:
    """The files the template hash reads, as a small checkout."""
    for name, text in {
        "cdk.json": "{}",
        "infra/app.py": "APP = 1\n",
        "infra/nightly.yaml": "suite: nightly\n",
        "statemachines/benchmark.asl.json": '{"StartAt": "A"}',
        "functions/api.py": function_text,
        "src/benchwright/providers/aws/kinds/rds.py": kind_text,  # the app imports IAM actions from here
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_template_is_keyed_by_the_sources_not_by_the_checkouts_path(tmp_path: Path) -> None:
    context = {"benchwright": {"region": "us-east-1"}}
    one = _inputs_hash(checkout(tmp_path / "one"), context, None)
    assert one == _inputs_hash(checkout(tmp_path / "clone"), context, None)
    changed = checkout(tmp_path / "changed", "def handler(e, c): return 2\n")
    assert _inputs_hash(changed, context, None) != one
    granted = checkout(tmp_path / "granted", kind_text="ACTIONS = ['rds:X', 'rds:Y']\n")
    assert _inputs_hash(granted, context, None) != one
    assert _inputs_hash(checkout(tmp_path / "two"), {"benchwright": {"region": "eu-west-1"}}, None) != one
