"""Number formatting shared by the text, HTML and Slack reports (one place, so they agree)."""

from __future__ import annotations


def fmt_rate(value: float | None) -> str:
    """ops/s: 12,345 / 1,234.5 / 12.35."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:,.1f}"
    return f"{value:.2f}"


def fmt_latency(us: float | None) -> str:
    """Microseconds shown in the unit a reader expects: 850 us, 12.3 ms, 1.25 s."""
    if us is None:
        return "-"
    if us >= 1_000_000:
        return f"{us / 1_000_000:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.1f} ms"
    return f"{us:.0f} us"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio as a signed percent change: 1.123 -> +12.3 %."""
    if ratio is None:
        return "-"
    return f"{(ratio - 1) * 100:+.1f} %"


def fmt_share(part: int, whole: int) -> str:
    """An error rate as a percentage: "0" when none failed, never rounded down to 0 when some did,
    and never rounded up to 100 when some succeeded (9,996 of 10,000 is 99.9, not 100.0)."""
    if not part or not whole:
        return "0"
    if part >= whole:
        return "100"
    share = 100 * part / whole
    return f"{share:.2g}" if share < 1 else f"{min(share, 99.9):.1f}"


def fmt_unsuccessful(statuses: dict[str, int]) -> str:
    """A -FAILED entry's count, said as what it is: "12 failed", "3 retried", "12 failed, 3 retried"."""
    parts = [
        f"{statuses[k]:,} {word}"
        for k, word in (("ERROR", "failed"), ("RETRY", "retried"))
        if statuses.get(k)
    ]
    return ", ".join(parts) or "0 failed"
