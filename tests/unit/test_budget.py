"""The budget before launch: every AWS example gets a price per cell from the same price book as the
cost stage; --max-usd refuses a spec over budget, naming the estimate and the budget, before anything
is created; the Price List answers are cached on disk. Prices come from recorded GetProducts
responses (tests/data/pricing, us-east-1): Pricing has no moto backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import ANY, Stubber

from benchwright.cli import main
from benchwright.errors import SpecError
from benchwright.experiments.budget import CachedPriceList, check_budget, enforce, estimate_spec
from benchwright.providers.aws.pricing import ExcerptPriceList
from benchwright.spec import SuiteSpec, load_suite, parse_suite, phase_seconds

ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "tests" / "data" / "pricing"
AWS_EXAMPLES = sorted((ROOT / "examples").glob("*.aws.yaml"))


def in_us_east_1(path: Path, tmp_path: Path) -> Path:
    """The example with its zones moved to us-east-1, where the recorded prices are."""
    text = path.read_text().replace("eu-west-1", "us-east-1").replace("euw1-az", "use1-az")
    out = tmp_path / path.name
    out.write_text(text)
    return out


@pytest.mark.parametrize("path", AWS_EXAMPLES, ids=lambda p: p.stem)
def test_every_aws_example_gets_a_complete_price_per_cell(path: Path, tmp_path: Path) -> None:
    suite = load_suite(in_us_east_1(path, tmp_path))
    prices = ExcerptPriceList.from_directory(str(PRICES), "us-east-1")
    for spec in suite.benchmarks:
        budget = estimate_spec(spec, prices)
        assert budget.missing == [], budget.missing
        assert budget.cells and all(c.usd > 0 for c in budget.cells)
        assert budget.total_usd == pytest.approx(sum(c.usd for c in budget.cells), abs=1e-3)


def test_validate_prints_the_cost_and_max_usd_refuses_over_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = in_us_east_1(ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml", tmp_path)
    assert main(["validate", str(spec), "--prices", str(PRICES)]) == 0
    out = capsys.readouterr().out
    total = float(out.split("estimated cost: ")[1].split(" USD")[0].replace(",", ""))
    assert total > 1 and "est. USD" in out

    assert main(["validate", str(spec), "--prices", str(PRICES), "--max-usd", f"{total * 2:.2f}"]) == 0
    assert main(["validate", str(spec), "--prices", str(PRICES), "--max-usd", "1"]) == 2
    err = capsys.readouterr().err
    assert "--max-usd" in err and f"{total:.2f} USD is over the budget of 1.00 USD" in err


def test_submit_refuses_over_budget_before_calling_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = in_us_east_1(ROOT / "examples" / "exp5-aurora-rds-pg.aws.yaml", tmp_path)
    code = main(
        ["submit", str(spec), "--prices", str(PRICES), "--max-usd", "0.5", "--api-url", "http://127.0.0.1:9"]
    )
    assert code == 2  # a budget error, not a connection error to the (absent) API
    assert "over the budget of 0.50 USD" in capsys.readouterr().err


def test_rehearse_refuses_over_budget_before_starting_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = in_us_east_1(ROOT / "examples" / "exp5-aurora-rds-pg.aws.yaml", tmp_path)
    out = tmp_path / "rehearsal"
    code = main(["rehearse", str(spec), "--prices", str(PRICES), "--max-usd", "0.5", "--out", str(out)])
    assert code == 2 and "over the budget of 0.50 USD" in capsys.readouterr().err
    assert not out.exists()  # no moto server, no container, no output directory


def test_an_incomplete_estimate_cannot_promise_a_budget(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml").read_text())
    data["target"]["instance_class"] = "db.x2iedn.24xlarge"  # not in the recorded prices
    suite = parse_suite(data)
    prices = ExcerptPriceList.from_directory(str(PRICES), "us-east-1")
    budgets = [estimate_spec(s, prices) for s in suite.benchmarks]
    assert budgets[0].missing
    with pytest.raises(SpecError, match="incomplete"):
        check_budget(budgets, 1000.0)


def test_local_specs_are_free_and_always_within_budget() -> None:
    suite: SuiteSpec = load_suite(ROOT / "examples" / "quickstart.yaml")
    budgets = enforce(suite, 0.0)
    assert [b.total_usd for b in budgets] == [0.0, 0.0]


def test_load_phases_are_sized_by_the_data() -> None:
    def spec(workload: str, props: dict[str, Any]) -> Any:
        return parse_suite(
            {"name": "s", "target": {"provider": "local", "engine": "postgres"},
             "workload": {"name": workload, "properties": props}}
        ).benchmarks[0]  # fmt: skip

    small = phase_seconds(spec("tpcc", {"tpcc.warehouses": 1}), "load")
    large = phase_seconds(spec("tpcc", {"tpcc.warehouses": 100}), "load")
    assert large > 50 * small and large > 2000
    assert phase_seconds(spec("tpcb", {"tpcb.scale": 10000}), "load") > 3600  # the seed: 5,978 s


def _products(price: str) -> dict[str, Any]:
    item = {
        "product": {"productFamily": "Database Instance", "attributes": {"instanceType": "db.t3.micro"}},
        "terms": {"OnDemand": {"x": {"priceDimensions": {"y": {"pricePerUnit": {"USD": price}}}}}},
    }
    return {"FormatVersion": "aws_v1", "PriceList": [json.dumps(item)]}


def test_prices_from_the_api_are_cached_on_disk(tmp_path: Path) -> None:
    cache = tmp_path / "prices.json"
    client = boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    first = CachedPriceList(lambda _service: client, "us-east-1", cache)
    with Stubber(client) as stub:
        stub.add_response("get_products", _products("0.017"), {"ServiceCode": "AmazonRDS", "Filters": ANY,
                                                              "FormatVersion": "aws_v1", "MaxResults": 10})  # fmt: skip
        assert first.price("AmazonRDS", instanceType="db.t3.micro") == 0.017
        stub.assert_no_pending_responses()
    # a new process: answered from the file, no call (an unexpected call would fail the Stubber)
    second = CachedPriceList(lambda _service: client, "us-east-1", cache)
    with Stubber(client):
        assert second.price("AmazonRDS", instanceType="db.t3.micro") == 0.017
    assert "db.t3.micro" in cache.read_text()
    assert second.lookup("AmazonRDS", {"instanceType": "db.t3.micro"}).source.startswith(
        "Price List API (cached on this machine "
    )


def test_validate_offline_prices_from_the_packaged_copy_and_names_the_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No credentials and no Price List endpoint: every figure comes from the cached price list that
    ships with benchwright, the output says so (and why), and the totals equal the excerpts' (the copy
    is made from them)."""
    from benchwright.providers.aws import common
    from benchwright.providers.aws.pricelist import packaged_copy

    # the process-wide boto3 session made here (without credentials, before moto is imported) is
    # dropped afterwards: later tests' clients must come from a session moto can intercept
    monkeypatch.setattr(common, "_SESSION", None)
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:9")  # never the real endpoint
    monkeypatch.setenv("BENCHWRIGHT_PRICE_CACHE", str(tmp_path / "prices.json"))
    spec = ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml"
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr().out
    squashed = "".join(out.split())
    assert f"cachedpricelistof{packaged_copy()['date']}" in squashed
    assert "thePriceListAPIcouldnotbeasked" in squashed and "incomplete" not in out
    offline = float(out.split("estimated cost: ")[1].split(" USD")[0].replace(",", ""))
    assert main(["validate", str(spec), "--prices", str(PRICES)]) == 0
    excerpts = capsys.readouterr().out
    assert "savedGetProductsresponses" in "".join(excerpts.split())
    assert float(excerpts.split("estimated cost: ")[1].split(" USD")[0].replace(",", "")) == offline
    assert not (tmp_path / "prices.json").exists()  # nothing from the copy is cached as an API answer
