"""`benchwright --help` and `--version` import no command module: the command list is static, and a
test holds it equal to what each module registers (a new command, or a changed help line, fails here)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from benchwright.cli import ALIASES, COMMANDS, SUMMARIES, build_parser, main


def _listed(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: action.help for action in sub._choices_actions}


def test_the_static_list_matches_every_module_s_own_help() -> None:
    assert _listed(build_parser(full=True)) == SUMMARIES
    assert set(SUMMARIES) | set(ALIASES) == set(COMMANDS)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["no-such-command"]])
def test_help_version_and_typos_import_no_command_module(argv: list[str]) -> None:
    probe = (
        "import sys\n"
        "from benchwright.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('benchwright.commands.') or m in ('pydantic', 'boto3', 'benchwright.results'))\n"
        "print('LOADED', loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "LOADED []" in out.stdout, out.stdout + out.stderr
    if argv == ["--help"]:
        assert "redis-bench (redis-benchmark)" in out.stdout and "cleanup" in out.stdout
    if argv == ["no-such-command"]:
        assert "invalid choice: 'no-such-command'" in out.stderr


def test_a_command_still_gets_its_own_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    assert "usage: benchwright validate" in capsys.readouterr().out
