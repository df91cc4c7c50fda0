"""The AWS facts the credit forecast rests on: one table, with where each came from and when.

Change a figure here only with its source: the forecast (forecast/credits.py), the rehearsal's
balance model (rehearse/metrics.py) and the docs quote these, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

FACTS_DATE = "2026-11-28"  # when these figures were written down from the pages cited below

# gp2 (EBS General Purpose SSD, and RDS gp2 storage)
# https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html#gp2-performance
# https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html#Concepts.Storage.GeneralSSD
GP2_BUCKET = 5_400_000.0  # I/O credits; a new volume starts with a full bucket
GP2_IOPS_PER_GIB = 3.0  # baseline, refilled into the bucket every second
GP2_MIN_BASELINE = 100.0
GP2_MAX_BASELINE = 16_000.0
GP2_BURST_IOPS = (
    3_000.0  # the bucket lets a volume burst to this; from 1,000 GiB the baseline is at least this
)
GP2_NO_BUCKET_FROM_GIB = 1_000  # baseline >= burst: the bucket never drains

# gp3 on RDS: no bucket, a fixed baseline that depends on size and engine
# https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html#gp3-storage
GP3_RDS_SMALL_IOPS = 3_000.0  # below the threshold
GP3_RDS_LARGE_IOPS = 12_000.0  # from the threshold (striped over four volumes)
GP3_RDS_THRESHOLD_GIB = 400
GP3_RDS_STRIPED_ENGINES = frozenset({"mysql", "mariadb", "postgres"})
# gp3 on EBS (self-managed EC2 targets): 3,000 IOPS at any size unless more are provisioned
# https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html#gp3-performance
GP3_EBS_IOPS = 3_000.0


@dataclass(frozen=True)
class TClass:
    """A burstable size: vCPUs, CPU credits earned per hour, baseline utilisation per vCPU."""

    vcpus: int
    credits_per_hour: float
    baseline: float

    @property
    def max_balance(self) -> float:
        return 24.0 * self.credits_per_hour  # a day's earnings


# T3 / T3a / T4g and T2: one credit = one vCPU at 100 % for one minute.
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/burstable-credits-baseline-concepts.html
_T3 = {
    "micro": TClass(2, 12.0, 0.10),
    "small": TClass(2, 24.0, 0.20),
    "medium": TClass(2, 24.0, 0.20),
    "large": TClass(2, 36.0, 0.30),
    "xlarge": TClass(4, 96.0, 0.40),
    "2xlarge": TClass(8, 192.0, 0.40),
}
_T2 = {
    "micro": TClass(1, 6.0, 0.10),
    "small": TClass(1, 12.0, 0.20),
    "medium": TClass(2, 24.0, 0.20),
    "large": TClass(2, 36.0, 0.30),
    "xlarge": TClass(4, 54.0, 0.225),
    "2xlarge": TClass(8, 81.6, 0.17),
}
T_CLASSES = {"t2": _T2, "t3": _T3, "t3a": _T3, "t4g": _T3}
# RDS runs db.t3 and db.t4g in Unlimited mode (a drained bucket costs surplus credits, it does not
# throttle); db.t2 in Standard mode (throttled to the baseline).
# https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Concepts.DBInstanceClass.Types.html
UNLIMITED_FAMILIES = frozenset({"t3", "t3a", "t4g"})
# Surplus CPU credits on RDS for MySQL / PostgreSQL, us-east-1 list price per vCPU-hour.
# https://aws.amazon.com/rds/mysql/pricing/ ("T4g and T3 CPU Credits")
RDS_SURPLUS_USD_PER_VCPU_HOUR = 0.075


def gp2_baseline(size_gib: float) -> float:
    """gp2 baseline IOPS: 3 per GiB, at least 100, at most 16,000."""
    return min(GP2_MAX_BASELINE, max(GP2_MIN_BASELINE, GP2_IOPS_PER_GIB * size_gib))


def gp3_rds_baseline(engine: str, size_gib: float) -> float:
    """RDS gp3 baseline IOPS: 12,000 from 400 GiB for the striped engines, else 3,000."""
    if engine in GP3_RDS_STRIPED_ENGINES and size_gib >= GP3_RDS_THRESHOLD_GIB:
        return GP3_RDS_LARGE_IOPS
    return GP3_RDS_SMALL_IOPS


def t_class(instance_class: str) -> tuple[str, TClass] | None:
    """``db.t3.small`` / ``t3.small`` -> ("t3", its figures); None for a class that is not burstable."""
    parts = instance_class.removeprefix("db.").split(".")
    if len(parts) != 2:
        return None
    family, size = parts
    figures = T_CLASSES.get(family, {}).get(size)
    return (family, figures) if figures is not None else None
