"""After the run: the observed balances held against the forecast stored with the cell.

The forecast (forecast/credits.py) is stored in the measured document's ``extra`` under
``FORECAST_KEY``: per balance metric, the regime predicted for the measured phase. The judge
(judge/validity.judge_cell) compares it with the regime it observed for the same metric:

- observed worse than predicted (a drain nobody expected, or a balance with no forecast at all,
  such as EBSIOBalance%): a warning, the forecast's hint or model was wrong;
- observed better than predicted from an ``expected_iops`` hint: info, the hint was pessimistic;
- a forecast that rested on the worst case (``assumed``) is an upper bound: a better observation
  agrees with it and is not flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from benchwright.judge.credits import CreditRegime, balance_name, credit_regime
from benchwright.results import MetricSeries, ValidityFlag

FORECAST_KEY = "credits_forecast"
MISMATCH = "credits_prediction_mismatch"
_ORDER: dict[str, int] = {"full": 0, "draining": 1, "exhausted": 2}


def observed_regimes(
    series: Iterable[MetricSeries], balance_floor_percent: float = 5.0, credit_floor: float = 1.0
) -> dict[str, CreditRegime]:
    """The worst regime seen per balance metric (several series may measure one metric)."""
    out: dict[str, CreditRegime] = {}
    for s in series:
        name = balance_name(s)
        if name is None or not s.points:
            continue
        seen = credit_regime(s, balance_floor_percent, credit_floor)
        if name not in out or _ORDER[seen] > _ORDER[out[name]]:
            out[name] = seen
    return out


def mismatch_flags(
    forecast: Mapping[str, Any] | None,
    series: Iterable[MetricSeries],
    balance_floor_percent: float = 5.0,
    credit_floor: float = 1.0,
) -> list[ValidityFlag]:
    """One ``credits_prediction_mismatch`` flag per balance whose observed regime the forecast missed.
    None (a run made before forecasts were stored): nothing to hold against, no flags."""
    if forecast is None:
        return []
    flags: list[ValidityFlag] = []
    for metric, seen in sorted(observed_regimes(series, balance_floor_percent, credit_floor).items()):
        predicted = forecast.get(metric)
        if not isinstance(predicted, Mapping):
            if seen != "full":
                flags.append(
                    ValidityFlag(
                        code=MISMATCH,
                        severity="warning",
                        message=f"{metric}: observed {seen}, which the forecast did not predict (it has "
                        "no model of this balance, or the target's storage or class gave none)",
                    )
                )
            continue
        expected = str(predicted.get("regime", "full"))
        if expected not in _ORDER or seen == expected:
            continue
        basis = "the spec's expected_iops"
        if predicted.get("assumed"):
            basis = (
                "every vCPU busy (assumed)" if metric == "CPUCreditBalance" else "the burst ceiling (assumed)"
            )
        if _ORDER[seen] > _ORDER[expected]:
            flags.append(
                ValidityFlag(
                    code=MISMATCH,
                    severity="warning",
                    message=f"{metric}: predicted {expected} from {basis}, observed {seen}: the workload "
                    "spent the bucket faster than forecast (raise expected_iops, or size the storage "
                    "for it)",
                )
            )
        elif not predicted.get("assumed"):
            flags.append(
                ValidityFlag(
                    code=MISMATCH,
                    severity="info",
                    message=f"{metric}: predicted {expected} from {basis}, observed {seen}: the workload "
                    "drove less I/O than its hint says (lower expected_iops)",
                )
            )
    return flags
