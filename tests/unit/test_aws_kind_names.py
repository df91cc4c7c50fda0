"""Where the code still branches on an AWS target kind by its name (or by its spec class) outside the
kinds' folder, providers/aws/targets/kinds/ (issue 28): counted per module and held to the counts
below, so a new branch fails the test and one converted to read the kind's descriptor must be
taken off the list. The lists only shrink.

Counted: a comparison with a kind's name (``== "rds"``, ``in ("rds", "aurora")``, ``x["ec2"]``), a
name as a dict key (``"memorydb": ...``) or in a tuple key (``("rds", "failover"): ...``), an
``isinstance`` on a kind's spec class, and a dict keyed by one. The pricing of a target (a run's, its
usage and a month's), its rehearsal stand-in and the burst start it carries, its target class, the
API call of each of its events and the janitor's listers, deletion table and order are read from the
descriptors and are not here any more; its timings, events, operations and their needs, its settings
list, whether Benchwright owns it, the connections and memory it holds and the storage and instance
class whose burst credits are forecast are its spec model's facts (spec/target_facts.py).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "benchwright"
OWN_FOLDER = "providers/aws/targets/kinds/"
NAMES = "rds|aurora|elasticache|memorydb|ec2|endpoint"
CLASSES = "RdsTarget|AuroraTarget|ElastiCacheTarget|MemoryDbTarget|Ec2Target|EndpointTarget|Ec2Spec"
BRANCH = re.compile(
    rf"""(==|!=|\bin \(?|\w\[)\s*["']({NAMES})["']|["']({NAMES})["']\s*:"""
    rf"""|isinstance\([^)]*\b({CLASSES})\b|^\s*({CLASSES}):\s"""
    rf"""|\(\s*["']({NAMES})["']\s*,[^)]*\)\s*:"""  # a tuple key: ("rds", "failover"): ...
)

# Real branches on a kind, still to move into its descriptor (module -> lines).
STILL_BRANCHING: dict[str, int] = {
    # None left: each kind's spec model, with its ``provider: Literal[NAME]`` (the discriminator of the
    # spec's target union), is in its folder (kinds/NAME/spec.py) and the union is made from the
    # registry; the local providers choose their class by the spec model it serves.
}
# The same words meaning something else: "ec2" the runner platform or a runner handle's kind,
# "endpoint" the dataset-target marker or a handle key, the cache stand-in's two services.
OTHER_MEANING: dict[str, int] = {
    "api/limits.py": 1,
    "experiments/runner_classes.py": 1,
    "providers/aws/cloudwatch.py": 1,
    "providers/aws/launcher.py": 3,
    "providers/aws/pricing.py": 1,
    "providers/aws/usage_prices.py": 1,  # the runner platform "ec2" (its hosts' network series)
    "providers/local/endpoint.py": 1,
    "rehearse/services/cache_api.py": 2,
    "rehearse/run_sessions.py": 2,  # an ARN's form per service (ElastiCache "x:name", MemoryDB "x/name")
    "rehearse/services/cache_parameters.py": 1,
    "rehearse/services/ec2.py": 1,
    "runner/dataset.py": 2,
    "runner/fingerprint.py": 1,
    "runner/plan.py": 1,
    "spec/runners.py": 3,
    "stages/context.py": 1,
    "stages/plan.py": 1,
}


def found_branches() -> Counter[str]:
    """Matching lines per module of the package and of functions/, outside the kinds' folder."""
    counts: Counter[str] = Counter()
    for path in [*SRC.rglob("*.py"), *(ROOT / "functions").rglob("*.py")]:
        name = str(path.relative_to(SRC if path.is_relative_to(SRC) else ROOT))
        if name.startswith(OWN_FOLDER):
            continue
        counts[name] += sum(1 for line in path.read_text().splitlines() if BRANCH.search(line))
    return +counts


def test_the_matcher_sees_a_branch_on_a_kind_and_not_a_mention() -> None:
    for branch in ('if provider == "rds":', 'x in ("aurora", "rds")', '"memorydb": 900.0,',
                   "if isinstance(target, Ec2Target):", "    RdsTarget: self._rds,",
                   '    ("rds", "failover"): reboot,'):  # fmt: skip
        assert BRANCH.search(branch), branch
    for mention in ('"""RDS and Aurora."""', "kind = kind_of_provider(target.provider)", "t: RdsTarget, x"):
        assert not BRANCH.search(mention), mention


def test_no_new_branch_on_an_aws_kind_name_and_the_list_only_shrinks() -> None:
    expected = Counter(STILL_BRANCHING) + Counter(OTHER_MEANING)
    found = found_branches()
    grown = {name: n for name, n in found.items() if n > expected.get(name, 0)}
    assert grown == {}, "a new branch on an AWS kind's name: read the kind's descriptor instead"
    shrunk = {name: n for name, n in expected.items() if found.get(name, 0) < n}
    assert shrunk == {}, "fewer branches than listed: lower the count (or drop the module)"
