"""Every registered AWS target kind (providers/aws/targets/kinds/) declares what the rest asks of it:
its spec provider, the resources it leaves, each found by a janitor lister and deleted by one idempotent
path, in one order; how its targets are priced (from the Price List services it names) and how a
rehearsal stands in for it. The IAM half (its actions granted by the stack) is
tests/infra/test_target_kind_iam.py."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from benchwright.experiments.budget import region_of
from benchwright.providers.aws import janitor, pricing
from benchwright.providers.aws.monthly import MonthlyPricer, describe
from benchwright.providers.aws.pricelist import ExcerptPriceList
from benchwright.providers.aws.pricing import AwsPriceBook
from benchwright.providers.aws.targets import TARGETS
from benchwright.providers.aws.targets import kinds as kinds_package
from benchwright.providers.aws.targets.kinds import (
    FOLDERS,
    kinds,
    rehearsal_services,
    resource_kinds,
    spec_models,
)
from benchwright.providers.aws.targets.kinds.base import AwsTargetKind, Rehearsal, ResourceKind
from benchwright.rehearse.hooks import Hooks
from benchwright.spec import TargetSpec, load_suite, parse_target
from benchwright.spec.targets import PROVIDERS
from tests.unit.test_deletion_paths import listed_kinds

KINDS = kinds()
ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "tests" / "data" / "pricing"  # the saved Price List rows the packaged copy is made from
ACTION = re.compile(r"^[a-z0-9-]+:[A-Z][A-Za-z0-9]+$")
# moto has no backend for deleting cache parameter groups: botocore's Stubber answers as AWS does
NO_MOTO = {
    "elasticache-parameter-group": (
        "elasticache",
        "delete_cache_parameter_group",
        "CacheParameterGroupNotFound",
    ),
    "memorydb-parameter-group": ("memorydb", "delete_parameter_group", "ParameterGroupNotFoundFault"),
}


def test_every_aws_provider_is_one_registered_kind() -> None:
    providers = [kind.provider for kind in KINDS.values() if kind.provider is not None]
    # one kind per spec provider but local, no kind without a spec model of its own
    assert sorted(providers) == sorted(set(PROVIDERS) - {"local"}) == sorted(TARGETS)
    assert len(providers) == len(set(providers))
    for kind in KINDS.values():  # the target class each names is the one serving its provider
        if kind.provider is not None:
            assert TARGETS[kind.provider].kind == kind.provider


def test_each_kind_is_its_folder_with_its_descriptor_and_its_target_class_and_model_there() -> None:
    """One folder per kind: kind.py's KIND, and for a target kind its target class (target.py) and
    its spec model (spec.py's MODEL) in the same folder."""
    folders = {kind.name: kind for kind in KINDS.values()}
    assert len(folders) == len(FOLDERS)
    for folder in FOLDERS:
        kind = importlib.import_module(f"{kinds_package.__name__}.{folder}.kind").KIND
        if kind.provider is None:
            continue
        home = f"{kinds_package.__name__}.{folder}."
        assert kind.target.startswith(home + "target:"), kind.target
        assert kind.spec is importlib.import_module(home + "spec").MODEL
        assert TARGETS[kind.provider].__module__ == home + "target"


def static_models() -> list[str]:
    """The kinds' models mypy reads: the ``AwsTargetModel`` union written out in the registry, under
    TYPE_CHECKING (module:Class, in its order)."""
    tree = ast.parse(Path(kinds_package.__file__).read_text())
    where: dict[str, str] = {}
    union: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            where.update({alias.asname or alias.name: f"{node.module}:{alias.name}" for alias in node.names})
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "AwsTargetModel":
            assert node.value is not None
            union = [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)]
    return sorted(where[name] for name in union)


def test_the_union_mypy_reads_is_the_one_made_at_run_time() -> None:
    """spec/targets.py builds ``TargetSpec`` from the registry at run time; mypy reads the union the
    registry writes out. A kind in one and not the other is found here: add it to both."""
    made = sorted(f"{m.__module__}:{m.__name__}" for m in spec_models())
    assert len(made) == 6
    assert static_models() == made


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_is_listed_deleted_and_ordered(name: str) -> None:
    kind = KINDS[name]
    for action in (*kind.iam_list, *kind.iam_delete):
        assert ACTION.match(action), action
    if not kind.resources:  # a kind that creates nothing (endpoint) asks nothing of the janitor
        assert kind.lister is None and not kind.iam_delete
        return
    assert kind.lister in janitor.LISTERS and kind.find in janitor.LISTERS[kind.lister]
    module = importlib.import_module(kind.find.__module__)  # its own module lists exactly what it owns
    assert module.KIND is kind
    assert {r.name for r in kind.resources} == listed_kinds(module.__name__.split(".")[-2])
    for resource in kind.resources:
        assert janitor.KINDS[resource.name] is resource.delete  # the janitor deletes through it
    assert kind.iam_list and kind.iam_delete
    services = {action.split(":")[0] for action in kind.iam_delete}
    assert services == {kind.lister}  # it deletes in the service its lister reads


def test_the_janitor_reads_its_table_and_order_from_the_kinds() -> None:
    ordered = resource_kinds()
    assert tuple(janitor.KINDS) == janitor.ORDER == tuple(r.name for r in ordered)
    assert set(janitor.KINDS) == listed_kinds()  # every kind a lister finds has a declared owner
    ranks = [r.order for r in ordered]
    assert len(set(ranks)) == len(ranks) and ranks == sorted(ranks)
    position = janitor.ORDER.index
    assert (
        position("ecs-task") < position("ec2-instance") < position("rds-instance") < position("rds-cluster")
    )
    for group in ("rds-parameter-group", "rds-cluster-parameter-group", "elasticache-parameter-group",
                  "memorydb-parameter-group", "ec2-network-interface"):  # fmt: skip
        assert position(group) > position("memorydb-cluster")  # what a target uses goes after it


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    with mock_aws():
        made: dict[str, Any] = {}
        yield lambda service: made.setdefault(service, boto3.client(service))


@pytest.mark.parametrize("resource", [r.name for r in resource_kinds()])
def test_each_deletion_path_counts_already_gone_as_deleted(aws: Any, resource: str) -> None:
    ident = {"ec2-instance": "i-0123456789abcdef0", "ec2-network-interface": "eni-0123456789abcdef0"}
    extra = (
        {"cluster": "arn:aws:ecs:us-east-1:123456789012:cluster/bw-gone"} if resource == "ecs-task" else {}
    )
    gone = janitor.Resource(resource, ident.get(resource, "bw-gone"), extra=extra)
    if resource not in NO_MOTO:
        assert janitor.delete(aws, gone) is True
        assert janitor.delete(aws, gone) is True  # twice: still deleted, never an error
        return
    service, operation, code = NO_MOTO[resource]
    client = aws(service)
    with Stubber(client) as stub:
        stub.add_client_error(operation, service_error_code=code, http_status_code=404)
        assert janitor.delete(aws, gone) is True
        stub.assert_no_pending_responses()


def _sample_targets() -> dict[str, tuple[TargetSpec, str]]:
    """A target of each priced provider, in its region: the first in the AWS examples and the nightly
    suite (which tests/data/pricing prices completely), and a MemoryDB cluster, which no example has."""
    found: dict[str, tuple[TargetSpec, str]] = {
        "memorydb": (
            parse_target(
                {
                    "provider": "memorydb",
                    "engine": "redis",
                    "engine_version": "7.1",
                    "node_type": "db.r7g.large",
                }
            ),
            "us-east-1",
        )
    }
    for path in [*sorted((ROOT / "examples").glob("*.aws.yaml")), ROOT / "infra" / "nightly.yaml"]:
        for spec in load_suite(str(path)).benchmarks:
            found.setdefault(spec.target.provider, (spec.target, region_of(spec)))
    return found


SAMPLES = _sample_targets()


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_prices_its_targets_from_the_services_it_names(name: str) -> None:
    kind = KINDS[name]
    if kind.price is None:  # the endpoint (someone else's database) and the runner's tasks
        if kind.provider is not None:
            endpoint = parse_target(
                {"provider": kind.provider, "engine": "postgres", "hosts": ["127.0.0.1:5432"]}
            )
            assert (
                AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES))).target_items(endpoint, 3600) == {}
            )
        return
    assert kind.provider in SAMPLES, f"no sample {kind.provider} target to price"
    target, region = SAMPLES[kind.provider]
    prices = ExcerptPriceList.from_directory(str(PRICES), region)
    used: set[str] = set()
    prices.on_use = lambda service, _row: used.add(service)
    items = AwsPriceBook(prices).target_items(target, 3600)
    assert items and all(usd > 0 for usd in items.values()), items
    assert used and used <= set(kind.price_services), (used, kind.price_services)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_priced_kind_prices_a_month_of_its_targets_in_its_own_words(name: str) -> None:
    """The seeds' monthly tables (providers/aws/monthly.py) ask the kind: a month of its sample target,
    priced only from the services it names, under a configuration in its own words."""
    kind = KINDS[name]
    if kind.price is None:
        assert kind.monthly is None and kind.describe is None
        return
    target, region = SAMPLES[kind.provider or ""]
    pricer, used = MonthlyPricer(ExcerptPriceList.from_directory(str(PRICES), region)), set[str]()
    row = pricer.row
    pricer.row = lambda service, **attributes: (used.add(service), row(service, **attributes))[1]  # type: ignore[method-assign]
    month = pricer.price(target)
    assert month is not None and month.configuration == describe(target) != target.provider
    assert month.lines and month.part_usd("server"), month.missing
    assert used and used <= set(kind.price_services), (used, kind.price_services)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_priced_kind_says_where_its_target_sits_for_cross_az_transfer(name: str) -> None:
    kind = KINDS[name]
    if kind.price is None:  # no AZ we know of (an endpoint): runner traffic is not priced across AZs
        assert kind.zones is None
        return
    assert kind.zones is not None
    target, region = SAMPLES[kind.provider or ""]
    zones = kind.zones(target)
    assert isinstance(zones, list) and all(z.startswith(region) for z in zones), zones


@pytest.mark.parametrize("name", sorted(k.name for k in KINDS.values() if k.burst_start_field))
def test_a_kind_whose_stand_in_carries_a_burst_start_takes_it_at_the_field_it_names(name: str) -> None:
    """A quick rehearsal stamps ``burst_start_pct`` on the field the kind names (credits_carry.py):
    its spec model takes it there on gp2 storage."""
    kind = KINDS[name]
    field = kind.burst_start_field or ""
    target, _region = SAMPLES[kind.provider or ""]
    data = target.model_dump(mode="json", exclude_none=True)
    data[field] = {**data.get(field, {}), "type": "gp2", "size_gb": 100, "burst_start_pct": 12.5}
    data[field].pop("iops", None), data[field].pop("throughput_mbps", None)
    assert getattr(parse_target(data), field).burst_start_pct == 12.5


def test_a_priced_kind_without_a_monthly_price_or_its_zones_is_refused() -> None:
    none, month = Rehearsal((), "none"), {"monthly": lambda *a: None, "describe": str}
    priced = {"name": "toy", "provider": "toy", "target": "m:C", "rehearsal": none, "price": lambda *a: None,
              "price_services": ("S",), "spec": object}  # fmt: skip
    with pytest.raises(ValueError, match="no monthly price"):
        AwsTargetKind(**priced)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="zones="):
        AwsTargetKind(**priced, **month)  # type: ignore[arg-type]
    assert AwsTargetKind(**priced, **month, zones=lambda t: []).zones is not None  # type: ignore[arg-type]


def test_the_price_book_names_no_target_kind() -> None:
    """It prices a target through its kind's ``price``: no dispatch on the spec's target classes."""
    source = inspect.getsource(pricing)
    for target_class in ("RdsTarget", "AuroraTarget", "ElastiCacheTarget", "MemoryDbTarget", "Ec2Target"):
        assert target_class not in source
    # Enhanced Monitoring's log ingestion is priced for the kinds that name CloudWatch (price_snapshot)
    assert {k.provider for k in KINDS.values() if "AmazonCloudWatch" in k.price_services} == {"rds", "aurora"}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_says_how_a_rehearsal_stands_in_for_it(name: str) -> None:
    rehearsal = KINDS[name].rehearsal
    assert rehearsal is not None and rehearsal.standin
    if KINDS[name].resources:  # what it creates in AWS, a rehearsal turns into something real
        assert rehearsal.services
    for module in rehearsal.services:
        assert module.startswith("benchwright.rehearse.")
        assert callable(importlib.import_module(module).install)


def test_a_rehearsal_installs_every_kinds_stand_in_once_in_its_kinds_order() -> None:
    services = rehearsal_services()
    declared = {m for kind in KINDS.values() if kind.rehearsal for m in kind.rehearsal.services}
    assert len(services) == len(set(services)) and set(services) == declared
    rds = [f"benchwright.rehearse.{m}" for m in ("services.rds", "services.rds_restore", "events")]
    assert [services.index(m) for m in rds] == sorted(services.index(m) for m in rds)  # they wrap RDS's hooks
    install = inspect.getsource(Hooks.install)
    assert "rehearsal_services()" in install
    assert not re.search(r"\b(rds|rds_restore|events|ec2|ecs|cache)\b,|import (rds|ec2|ecs|cache)\b", install)


def test_a_kind_without_a_rehearsal_stand_in_or_with_an_unnamed_price_is_refused() -> None:
    with pytest.raises(ValueError, match="no rehearsal stand-in"):
        AwsTargetKind(name="toy", provider="toy")
    none = Rehearsal((), "none")
    with pytest.raises(ValueError, match="Price List services"):
        AwsTargetKind(name="toy", provider="toy", target="m:C", rehearsal=none, price=lambda *a: None)
    with pytest.raises(ValueError, match="target class"):
        AwsTargetKind(name="toy", provider="toy", rehearsal=none)
    owned = (ResourceKind("toy-thing", lambda c, i, x: True, 999),)
    with pytest.raises(ValueError, match="find="):  # resources nobody lists are never swept
        AwsTargetKind(name="toy", provider=None, resources=owned, lister="toy", rehearsal=none)


def test_the_kinds_stand_ins_patch_moto_apart_so_their_order_does_not_matter(tmp_path: Path) -> None:
    """Installed in the kinds' order (EC2's before RDS's since the kinds say so): no attribute is
    patched by two stand-ins, and uninstalling restores each. Only the stand-ins are installed here
    (Hooks.install also configures moto for the whole process, which a rehearsal's server wants and a
    test worker does not)."""
    patched: list[tuple[Any, str, Any]] = []

    class Recording(Hooks):
        def patch(self, owner: Any, name: str, value: Any) -> None:
            patched.append((owner, name, owner.__dict__[name]))
            super().patch(owner, name, value)

    hooks = Recording(account=None, containers=None, image="unused", out_dir=tmp_path)  # type: ignore[arg-type]
    try:
        for module in rehearsal_services():
            importlib.import_module(module).install(hooks)
        names = [(id(owner), name) for owner, name, _ in patched]
        assert len(names) == len(set(names)) and len(names) > 20
        ec2 = importlib.import_module("moto.ec2.models.instances").InstanceBackend
        assert (id(ec2), "run_instances") in names  # the EC2 kind's stand-in is installed
    finally:
        hooks.uninstall()
    assert all(owner.__dict__[name] is before for owner, name, before in patched)
