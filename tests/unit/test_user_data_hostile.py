"""Issue 30 item 1: the EC2 user-data templates (targets and runners) pass values as data.

Every template is rendered with hostile values in every value slot, checked by ``bash -n``, and its
values block (between the ``# --- values`` markers) is executed in a scratch directory: each value
must come back byte for byte, as one word, and nothing a value says may run (no PWNED file). The
runner's boot script is checked the same way on its ``docker run`` line. The spec refuses these
values long before (tests/unit/test_hostile_specs.py); this is the second wall.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.providers.aws.targets.kinds.ec2.target import SERVERS, TEMPLATES, Ec2Target, render_user_data
from benchwright.providers.aws.userdata import runner_user_data
from benchwright.spec import parse_target


def hostile(scratch: Path) -> list[str]:
    """Values that each try to run ``touch PWNED`` in ``scratch`` by leaving their quoting."""
    pwned = scratch / "PWNED"
    return [
        f'2024.2.0.0"; touch {pwned}; echo "',
        f"1gb; touch {pwned} #",
        f"$(touch {pwned})",
        f"`touch {pwned}`",
        f"'; touch {pwned}; '",
        f"x\ntouch {pwned}\n",
        f"a b c ) ; touch {pwned} ; (",
        f"${{IFS}}$(touch${{IFS}}{pwned})",
        f"\\'; touch {pwned} #",
        f"--flag=$'\\x27'; touch {pwned}",
        "",
        "*",
        "-e",
    ]


SCALARS = (
    "node_ip",
    "master_addresses",
    "master_start",
    "master_others",
    "master_leaving",
    "replication_factor",
    "yb_version",
    "yb_build",
    "port",
)
ARRAYS = ("master_flags", "tserver_flags", "server_args")
CODE = {"packages": "redis6", "install_commands": "", "start_command": "true", "master_join": ""}
# what the values block binds each slot to (templates/*.sh)
NAMES = {
    "node_ip": "NODE_IP",
    "master_addresses": "MASTERS",
    "master_start": "MASTER_START",
    "master_others": "MASTER_OTHERS",
    "master_leaving": "MASTER_LEAVING",
    "replication_factor": "REPLICATION_FACTOR",
    "yb_version": "YB_VERSION",
    "yb_build": "YB_BUILD",
    "port": "PORT",
    "master_flags": "MASTER_FLAGS",
    "tserver_flags": "TSERVER_FLAGS",
    "server_args": "SERVER_ARGS",
}


def values_block(script: str) -> str:
    start = script.index("# --- values")
    end = script.index("# --- end of values")
    return script[start:end]


def run_bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=20, check=False
    )


@pytest.mark.parametrize("template", sorted(TEMPLATES))
@pytest.mark.parametrize("index", range(13))
def test_every_value_of_every_template_stays_data(template: str, index: int, tmp_path: Path) -> None:
    value = hostile(tmp_path)[index]
    values: dict[str, Any] = {k: value for k in SCALARS} | {k: [value, f"--x={value}"] for k in ARRAYS}
    script = render_user_data(template, values, CODE)
    syntax = subprocess.run(
        ["bash", "-n"], input=script, capture_output=True, text=True, timeout=20, check=False
    )
    assert syntax.returncode == 0, syntax.stderr
    block = values_block(script)
    shown = [k for k in NAMES if f"${NAMES[k]}" not in block and f"{NAMES[k]}=" in block]
    assert shown, "the values block binds the template's values"
    # print every bound value NUL-separated (arrays word by word) and compare with what went in
    dump = "\n".join(
        f'printf "%s\\0" "${{{NAMES[k]}[@]}}"' if k in ARRAYS else f'printf "%s\\0" "${NAMES[k]}"'
        for k in shown
    )
    result = run_bash("set -u\n" + block + dump, tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "PWNED").exists()
    expected: list[str] = []
    for k in shown:
        expected += [value, f"--x={value}"] if k in ARRAYS else [value]
    assert result.stdout.split("\0")[:-1] == expected


def test_the_whole_script_outside_the_values_block_holds_no_value(tmp_path: Path) -> None:
    """A marker value appears in the rendered script only inside the values block."""
    marker = "zz-marker-zz"
    for template in TEMPLATES:
        values: dict[str, Any] = {k: marker for k in SCALARS} | {k: [marker] for k in ARRAYS}
        script = render_user_data(template, values, CODE)
        block = values_block(script)
        assert marker in block
        assert marker not in script.replace(block, "")


def test_code_slots_take_only_code_and_values_only_values() -> None:
    with pytest.raises(ValueError, match="take code"):
        render_user_data("redis-protocol", {"start_command": "rm -rf /"}, CODE)
    with pytest.raises(ValueError, match="take code"):
        render_user_data("redis-protocol", {"port": "1"}, {**CODE, "port": "1"})


def _ec2(spec: dict[str, Any], ips: list[str]) -> Ec2Target:
    from benchwright.providers.aws.config import AwsSettings

    handle = {"ips": ",".join(ips)}
    return Ec2Target(parse_target(spec), "hostile", handle, clients=None, config=AwsSettings())  # type: ignore[arg-type]


@pytest.mark.parametrize("server", sorted(set(SERVERS) - {"ardb"}))
def test_the_targets_settings_reach_the_server_as_separate_words(server: str, tmp_path: Path) -> None:
    """What the provider renders from a valid spec: settings become flag words, each one argument."""
    spec = {
        "provider": "ec2",
        "engine": "redis",
        "template": "redis-protocol",
        "instance_type": "m6i.large",
        "server": server,
        "settings": {"maxmemory": "1gb", "maxmemory_policy": "allkeys-lru", "appendonly": True},
    }
    script = _ec2(spec, ["10.0.0.5"]).node_user_data(0)
    assert subprocess.run(["bash", "-n"], input=script, text=True, timeout=20, check=False).returncode == 0
    result = run_bash(values_block(script) + 'printf "%s\\0" "${SERVER_ARGS[@]}"', tmp_path)
    words = result.stdout.split("\0")[:-1]
    assert words == ["--appendonly", "yes", "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru"]


def test_a_replacement_node_gets_its_addresses_as_values(tmp_path: Path) -> None:
    spec = {
        "provider": "ec2",
        "engine": "postgres",
        "template": "yugabytedb-3node",
        "instance_type": "m6i.large",
    }
    ips = ["10.0.0.5", "10.0.1.6", "10.0.2.7"]
    script = _ec2(spec, ips).replacement_user_data(2, "10.0.2.9")  # a new address (node_replace)
    assert subprocess.run(["bash", "-n"], input=script, text=True, timeout=20, check=False).returncode == 0
    shown = '"$NODE_IP" "$MASTERS" "$MASTER_OTHERS" "$MASTER_START" "$MASTER_LEAVING"'
    result = run_bash(values_block(script) + f'printf "%s|%s|%s|%s|%s" {shown}', tmp_path)
    # joins the quorum of the three (the replaced node's master included), which then loses the old one
    assert result.stdout == (
        "10.0.2.9|10.0.0.5:7100,10.0.1.6:7100,10.0.2.9:7100|10.0.0.5:7100,10.0.1.6:7100,10.0.2.7:7100||10.0.2.7"
    )
    joins = script.index('admin "$MASTER_OTHERS" ADD_SERVER "$NODE_IP"')
    assert joins < script.index('admin "$MASTERS" REMOVE_SERVER "$MASTER_LEAVING"')


def test_an_address_that_is_not_one_never_reaches_the_user_data() -> None:
    from benchwright.errors import ProvisioningFailed

    spec = {
        "provider": "ec2",
        "engine": "postgres",
        "template": "yugabytedb-3node",
        "instance_type": "m6i.large",
    }
    with pytest.raises(ProvisioningFailed, match="not an IP address"):
        _ec2(spec, ["10.0.0.5", "$(id)", "10.0.0.7"]).node_user_data(0)


@pytest.mark.parametrize("index", range(13))
def test_the_runners_boot_script_passes_its_arguments_as_words(index: int, tmp_path: Path) -> None:
    value = hostile(tmp_path)[index]
    script = runner_user_data(
        "123456789012.dkr.ecr.eu-west-1.amazonaws.com/benchwright:latest",
        ["run", value, f"--spec={value}"],
        {"BENCHWRIGHT_X": value},
        "eu-west-1",
    )
    assert subprocess.run(["bash", "-n"], input=script, text=True, timeout=20, check=False).returncode == 0
    # the docker run command: from its line to the last line (a quoted newline spans lines)
    line = script[script.index("\ndocker run") + 1 : script.index('\necho "benchwright runner exited')]
    # the docker run line as bash reads it: replace the command by printf of its words
    result = run_bash('printf "%s\\0" ' + line.removeprefix("docker "), tmp_path)
    assert not (tmp_path / "PWNED").exists()
    words = result.stdout.split("\0")[:-1]
    assert words == shlex.split(line)[1:]
    assert words[-3:] == ["run", value, f"--spec={value}"] and f"BENCHWRIGHT_X={value}" in words
