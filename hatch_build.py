"""Build hook: compile the event loops' hot path (src/benchwright/runner/_fastloop.c).

One C file, no third-party headers (it looks libpq up in the copy psycopg loaded; RESP it scans itself), so the compiler is
called directly with Python's own flags instead of through setuptools. Linux only (it uses epoll);
elsewhere the package is pure Python and the loop runs as Python, which the result document says.
A wheel gets the module as a build artefact; an editable install (``pip install -e``, the venv of
``make bootstrap``) gets it next to the source, where the editable path finds it.
``python hatch_build.py`` rebuilds it in place after the C file changed (``make ext``);
``python hatch_build.py --sanitize DIR`` builds it with AddressSanitizer and UBSan under DIR
(``make sanitize``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).parent / "src" / "benchwright" / "runner" / "_fastloop.c"
MODULE = "benchwright/runner/_fastloop" + str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")


SANITIZE = (
    "-O1",
    "-g",
    "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=undefined",
)


def compile_extension(target: Path, optimise: tuple[str, ...] = ("-O2",)) -> Path:
    """Compile ``SOURCE`` to ``target``; a compiler error stops the build (no silent fallback)."""
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    command = [
        *compiler,
        *optimise,
        "-Wall",
        "-Werror",
        "-fPIC",
        "-shared",
        f"-I{sysconfig.get_paths()['include']}",
        str(SOURCE),
        "-o",
        str(target),
        "-ldl",
    ]
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(command, check=True)
    return target


def in_place() -> Path:
    return compile_extension(Path(__file__).parent / "src" / MODULE)


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script, outside a build
    BuildHookInterface = object  # type: ignore[assignment,misc]


class CustomBuildHook(BuildHookInterface):  # type: ignore[misc,valid-type]
    """Hatchling's hook: compile, then ship the module in the wheel (platform-tagged)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or not sys.platform.startswith("linux"):
            return
        if version == "editable":
            in_place()
            return
        built = compile_extension(Path(tempfile.mkdtemp(prefix="benchwright-ext-")) / Path(MODULE).name)
        build_data["force_include"][str(built)] = MODULE
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    if sys.argv[1:2] == ["--sanitize"]:  # scripts/sanitize: ASan + UBSan build into a copy of the tree
        print(compile_extension(Path(sys.argv[2]) / MODULE, SANITIZE))
    else:
        print(in_place())
