"""Burst and credit balances: ONE judgement for every balance series, wherever it was measured.

Experiment 3's lesson: a gp2 volume (BurstBalance), an EBS-optimised instance (EBSIOBalance%,
EBSByteBalance%) or a T-class instance (CPUCreditBalance) that drains its bucket mid-run measures
its baseline, not its burst, and the throughput collapses without an error. Each balance series gets
a regime: ``exhausted`` (it fell below the floor: the result is invalid), ``draining`` (it fell by
more than 10 % of its start: a longer run would have hit the floor) or ``full``.

CloudWatch keeps 60-second data, so a measured window shorter than the validity policy's
``cloud_min_duration_s`` is described by too few points to say anything; ``cloud_window_flags`` says so. The CloudWatch source takes its period
from here, so the judgement and the query agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from benchwright.forecast.facts import UNLIMITED_FAMILIES, t_class
from benchwright.results import MetricSeries, Severity, ValidityFlag

PERCENT_BALANCES = frozenset({"BurstBalance", "EBSIOBalance%", "EBSByteBalance%"})
COUNT_BALANCES = frozenset({"CPUCreditBalance"})
CLOUDWATCH_PERIOD_S = 60
SHORT_FOR_CLOUD_METRICS = "too_short_for_cloud_metrics"  # one code wherever the window is judged
DRAINING_DROP = 0.10  # a balance that lost more than this share of its start is draining

CreditRegime = Literal["full", "draining", "exhausted"]
_SEVERITY: dict[CreditRegime, Severity] = {"exhausted": "invalid", "draining": "warning", "full": "info"}


def balance_name(series: MetricSeries) -> str | None:
    """The balance metric a series measures (``BurstBalance|dims`` -> ``BurstBalance``), else None."""
    base = series.name.split("|")[0]
    return base if base in PERCENT_BALANCES or base in COUNT_BALANCES else None


def _floor(
    series: MetricSeries, values: list[float], balance_floor_percent: float, credit_floor: float
) -> float:
    if balance_name(series) in PERCENT_BALANCES:
        return balance_floor_percent
    return max(credit_floor, 0.01 * max(values))  # CPU credits: a count whose size depends on the class


def credit_regime(
    series: MetricSeries, balance_floor_percent: float = 5.0, credit_floor: float = 1.0
) -> CreditRegime:
    """exhausted: the balance fell below its floor; draining: it lost more than 10 % of its start."""
    values = [p.value for p in sorted(series.points, key=lambda p: p.t)]
    if not values:
        return "full"
    if min(values) < _floor(series, values, balance_floor_percent, credit_floor):
        return "exhausted"
    if values[-1] < values[0] * (1.0 - DRAINING_DROP):
        return "draining"
    return "full"


def unlimited(instance_class: str | None) -> bool:
    """T3, T3a and T4g run in Unlimited mode on RDS (always) and on EC2 (by default): an empty CPU
    credit balance is billed as surplus credits, never throttled. T2 (Standard) is throttled."""
    found = t_class(instance_class) if instance_class else None
    return found is not None and found[0] in UNLIMITED_FAMILIES


def judge_credits(
    series: Iterable[MetricSeries],
    balance_floor_percent: float = 5.0,
    credit_floor: float = 1.0,
    target_class: str | None = None,
) -> list[ValidityFlag]:
    """One flag per balance series with points: ``credits_<regime>``, naming the metric and source.
    An empty CPU credit balance on an Unlimited class (``target_class``) kept its speed: it is
    ``credits_surplus``, a warning about cost, not an invalid measurement."""
    flags: list[ValidityFlag] = []
    for s in series:
        name = balance_name(s)
        if name is None or not s.points:
            continue
        regime = credit_regime(s, balance_floor_percent, credit_floor)
        code, severity = f"credits_{regime}", _SEVERITY[regime]
        message = f"{s.name} ({s.source}): credit regime {regime}"
        if regime == "exhausted":
            low = min(p.value for p in s.points)
            at = next(p.t for p in s.points if p.value == low)
            unit = "%" if name in PERCENT_BALANCES else ""
            if name not in COUNT_BALANCES:
                what = "the volume ran out of burst credits and ran at its baseline"
            elif unlimited(target_class):
                code, severity = "credits_surplus", "warning"
                what = (
                    f"{target_class} runs in Unlimited mode, so it kept its speed and was billed "
                    "for surplus CPU credits, which this run's cost does not include"
                )
            elif target_class:
                what = f"{target_class} was throttled to its CPU baseline"
            else:
                what = "the instance was throttled to its CPU baseline (a T class in Standard mode)"
            message += f", fell to {low:.1f}{unit} at t={at:.0f} s: {what}"
        flags.append(ValidityFlag(code=code, severity=severity, message=message))
    return flags


def cloud_window_flags(series: Iterable[MetricSeries], window_s: float, min_s: float) -> list[ValidityFlag]:
    """A warning when CloudWatch series describe a window shorter than ``min_s`` (the validity
    policy's ``cloud_min_duration_s``): the same flag, code and threshold the phase's own judgement
    gives (judge/validity.py), so a short cell is flagged once for this one reason."""
    if not any(s.source.startswith("cloudwatch:") for s in series):
        return []
    if window_s >= min_s:
        return []
    return [
        ValidityFlag(
            code=SHORT_FOR_CLOUD_METRICS,
            severity="warning",
            message=f"the measured window is {window_s:.0f} s; CloudWatch reports {CLOUDWATCH_PERIOD_S}-second "
            f"points, so fewer than {min_s:g} s cannot show what the server did",
        )
    ]
