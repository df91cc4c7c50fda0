"""Issue 27's "its rehearsal observes the drain it predicted", without a server: exp3's full forecast
says where the small gp2 bucket stands when its measured phases start (empty: the long load drained
it); a quick rehearsal carries that start into the quick cells' forecast (made by ExpandMatrix's own
code) and into the stand-in's balance model; the judge's check then agrees, and flags the case where
forecast and stand-in start apart (closing3's mismatch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.forecast.advice import gp2_size_without_drain
from benchwright.forecast.check import MISMATCH, mismatch_flags
from benchwright.forecast.credits import forecast_spec
from benchwright.rehearse.credits_carry import carry, measured_starts, standin_key, standin_starts
from benchwright.rehearse.metrics import CreditModel
from benchwright.rehearse.prepare import quick_suite
from benchwright.results import MetricPoint, MetricSeries
from benchwright.spec import load_suite, parse_spec
from benchwright.spec.model import SuiteSpec, spec_dict
from benchwright.stages.suite import expand
from tests.aws_world import rds_spec

EXP3 = Path(__file__).resolve().parents[2] / "examples" / "exp3-rds-mysql-storage.aws.yaml"
QUICK_RUN_S = 8  # rehearse/prepare.quick_suite's phase length


def gp2_forecasts(suite: SuiteSpec) -> list[dict[str, Any]]:
    """Each gp2 100 GiB cell's stored forecast, as ExpandMatrix makes it for the workflow."""
    event = expand({"spec": spec_dict(suite.benchmarks[0]), "run_id": "r-carry"})
    cells = [c for g in event["groups"] for c in g["cells"]]
    return [
        c["credits_forecast"]
        for c in cells
        if c["spec"]["target"]["storage"]["type"] == "gp2"
        and c["spec"]["target"]["storage"]["size_gb"] == 100
    ]


def standin_series(burst_fraction: float | None, iops: float = 3000.0) -> MetricSeries:
    """The BurstBalance the rehearsal's stand-in publishes over a quick run (its own model)."""
    model = CreditModel("db.t3.small", "gp2", 100.0, burst_fraction=burst_fraction)
    points = []
    for second in range(QUICK_RUN_S):
        model.advance(1.0, iops, 0.5)
        points.append(MetricPoint(t=float(second), value=model.balances()["BurstBalance"][0]))
    return MetricSeries(name="BurstBalance|DBInstanceIdentifier=x", unit="Percent", source="cloudwatch:AWS/RDS",
                        points=points)  # fmt: skip


def test_the_full_exp3_forecast_drains_the_small_gp2_bucket_before_its_measured_phases() -> None:
    assert measured_starts(load_suite(EXP3)) == {("gp2", 100): 0.0}  # gp2 1000 GiB has no bucket to drain


def test_a_carried_quick_rehearsal_predicts_and_observes_the_drain() -> None:
    full = load_suite(EXP3)
    starts = measured_starts(full)
    carried = carry(quick_suite(full), starts)
    forecasts = gp2_forecasts(carried)
    assert len(forecasts) == 2  # the quick matrix: gp2 100 GiB at two thread counts
    for forecast in forecasts:
        assert (
            forecast["BurstBalance"]["regime"] == "exhausted" and forecast["BurstBalance"]["start_pct"] == 0.0
        )
    fraction = standin_starts(starts)[standin_key("gp2", 100)]
    observed = standin_series(fraction)
    assert max(p.value for p in observed.points) < 1.0  # the stand-in's bucket really is empty
    assert all(mismatch_flags(f, [observed]) == [] for f in forecasts)  # predicted and observed agree


def test_a_forecast_and_a_stand_in_that_start_apart_are_flagged() -> None:
    """Without the carry the quick cells' forecast says "full"; a stand-in started empty (the old
    `credits_start=0` rehearsal) observes "exhausted": the judge's mismatch warning."""
    (forecast, _) = gp2_forecasts(quick_suite(load_suite(EXP3)))
    assert forecast["BurstBalance"]["regime"] == "full"
    ((flag,),) = [mismatch_flags(forecast, [standin_series(0.0)])]
    assert flag.code == MISMATCH and flag.severity == "warning"
    assert "predicted full" in flag.message and "observed exhausted" in flag.message


def test_the_start_balance_moves_the_drain_by_hand() -> None:
    """100 GiB gp2 (300 IOPS baseline) run at 2,000 IOPS from a half bucket: 2.7 M credits / 1,700
    a second = 1,588 s; from a full one 3,176 s."""
    spec = rds_spec("carry", storage={"type": "gp2", "size_gb": 100, "burst_start_pct": 50})
    spec["workload"]["phases"] = {
        "load": None,
        "run": {"threads": 2, "duration_s": 7200, "expected_iops": 2000},
    }
    (group,) = forecast_spec(parse_spec(spec))
    assert group.gp2 is not None and group.gp2.drain is not None
    assert group.gp2.drain.after_s == pytest.approx(2_700_000 / 1_700)
    assert next(iter(group.gp2.windows.values()))[0] == pytest.approx(50.0)
    # the proposal starts from the same half bucket: 2.7 M + (3 S - 2,000) x 7,200 >= 0 from S = 542 GiB
    # (from a full one: 417 GiB)
    assert group.storage is not None and gp2_size_without_drain(group.storage, group.segments) == 542


def test_a_start_balance_on_storage_without_a_bucket_is_refused_naming_the_field() -> None:
    spec = rds_spec("carry", storage={"type": "gp3", "size_gb": 100, "burst_start_pct": 0})
    with pytest.raises(SpecError) as err:
        parse_spec(spec)
    assert err.value.field == "target.storage" and "burst_start_pct" in str(err.value)


def test_a_one_cell_run_gets_its_forecast_at_validate_spec() -> None:
    """The benchmark state machine runs a one-cell spec without ExpandMatrix: its first stage makes
    the forecast the judge holds the run to (before, such a run had none and nothing was checked)."""
    from benchwright.stages import RunState, steps

    spec = rds_spec("one", storage={"type": "gp2", "size_gb": 100, "burst_start_pct": 0})
    state = RunState(run_id="r-one", spec_name="one", spec=spec)
    after = steps.validate_spec(state, None)  # type: ignore[arg-type]  # a pure stage: no provider used
    assert after.credits_forecast is not None
    assert after.credits_forecast["BurstBalance"]["regime"] == "exhausted"
    full = steps.validate_spec(RunState(run_id="r-one", spec_name="one", spec=rds_spec("one")), None)  # type: ignore[arg-type]
    assert full.credits_forecast is not None and "BurstBalance" not in full.credits_forecast  # gp3: no bucket


def test_the_cli_carries_credits_only_into_a_quick_rehearsal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchwright.cli import main

    out = tmp_path / "rehearsal"
    assert main(["rehearse", str(EXP3), "--credits-as-forecast", "--out", str(out)]) == 2
    assert "--credits-as-forecast" in capsys.readouterr().err
    assert not out.exists()  # refused before any server, container or directory
