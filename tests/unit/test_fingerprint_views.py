"""Issue 27: the fingerprint and the network floor are shown wherever a result is read: `show`, the
HTML report's "measured on" block, `table` (floor_p50 / floor_p99) and the Slack line."""

from __future__ import annotations

from benchwright.judge import compare_with_history
from benchwright.report.html import render_html
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.report.slack import build_message
from benchwright.report.table import build_table, render
from benchwright.report.text import render_summary
from benchwright.results import Fingerprint, NetworkFloor
from benchwright.runs import RunRecord

FP = Fingerprint(
    runner_class="measured",
    runner_platform="ec2",
    instance_type="c6i.2xlarge",
    cpu_model="Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
    cpu_count=8,
    kernel="6.1.0-aws",
    runner_az="eu-west-1a",
    runner_az_id="euw1-az2",
    target_az="eu-west-1a",
    target_az_id="euw1-az2",
    engine_version="8.0.35",
    target_class="db.m5.large",
    storage="gp2 100 GiB",
    spec_digest="0123456789ab",
)
FLOOR = NetworkFloor(command="SELECT 1", round_trips=200, p50_us=412.0, p99_us=987.0, max_us=1530.0)


def run(run_id: str = "r1", day: int = 1, fp: Fingerprint = FP, level: float = 2000) -> RunRecord:
    record = make_run(
        "s",
        run_id,
        [("c1", {}, noisy_series(level, 30, seed=day))],
        started_at=EPOCH.replace(day=day),
        seed=day,
    )
    for cell in record.cells:
        cell.phases["run"].fingerprint = fp
        cell.phases["run"].network_floor = FLOOR
    return record


def test_show_prints_the_fingerprint_and_the_floor() -> None:
    text = render_summary(run(), width=200)
    assert "measured on (all cells)" in text
    assert "measured runner on c6i.2xlarge: 8 x Intel(R) Xeon(R) Platinum 8375C" in text
    assert "engine version: 8.0.35" in text and "storage: gp2 100 GiB" in text
    assert "runner eu-west-1a / euw1-az2, target eu-west-1a / euw1-az2 (same-az)" in text
    assert f"fingerprint: {FP.key()}" in text
    assert "network floor: SELECT 1 x200 on one connection: p50 412 us, p99 987 us, max 1,530 us" in text


def test_the_report_has_a_measured_on_block() -> None:
    html = render_html(run())
    block = html[html.index('<section class="measured-on">') : html.index("</section>")]
    assert "measured on (all cells)" in block
    for shown in ("c6i.2xlarge", "8.0.35", "db.m5.large", "gp2 100 GiB", FP.key(), "p99 987 us"):
        assert shown in block, shown


def test_a_run_without_a_fingerprint_has_no_block() -> None:
    record = make_run("s", "old", [("c1", {}, noisy_series(2000, 30))])
    assert 'class="measured-on"' not in render_html(record)
    assert "measured on" not in render_summary(record)


def test_table_has_floor_columns() -> None:
    text = render(build_table([run()], metrics=["throughput", "floor_p50", "floor_p99"]), "md")
    assert "| operation | ops/s | floor p50 | floor p99 |" in text
    assert "| 412 us | 987 us |" in text
    group = render(build_table([run()], metrics=["floor"]), "md")
    assert "floor p50" in group


def test_slack_line_carries_the_floor_and_a_fingerprint_change() -> None:
    history = [run(f"h{i}", day=1 + i) for i in range(4)]
    new = run("new", day=20, fp=FP.model_copy(update={"engine_version": "8.0.36"}), level=1500)
    new.verdict = compare_with_history(new, history)
    message = build_message(new)
    texts = "\n".join(
        b.get("text", {}).get("text", "") if b["type"] == "section" and "text" in b else
        "\n".join(f["text"] for f in b.get("fields", []))
        for b in message["blocks"]
    )  # fmt: skip
    assert "floor p50/p99 412/987 us" in texts
    assert "fingerprint changed: engine_version 8.0.35 -> 8.0.36" in texts
    assert new.verdict.kind == "no_history"  # a 25 % drop on a new version is not called slower
