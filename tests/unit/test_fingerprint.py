"""Issue 27: the fingerprint's key and changes, the spec digest's stability, and comparisons that
never cross a fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.judge import compare_runs, compare_with_history
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.results import Fingerprint, ResultDocument
from benchwright.runner.floor import percentile_us
from benchwright.runs import RunRecord
from benchwright.spec import load_spec
from benchwright.stages.context import plan_context, spec_digest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def fingerprint(**changes: object) -> Fingerprint:
    base: dict[str, object] = {
        "runner_class": "measured",
        "runner_platform": "ec2",
        "instance_type": "c6i.2xlarge",
        "cpu_model": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
        "cpu_count": 8,
        "kernel": "6.1.0-aws",
        "runner_az": "eu-west-1a",
        "runner_az_id": "euw1-az2",
        "target_az": "eu-west-1a",
        "target_az_id": "euw1-az2",
        "engine_version": "PostgreSQL 16.3 on x86_64-pc-linux-gnu",
        "target_class": "db.r6g.large",
        "storage": "gp3 400 GiB 12000 IOPS",
        "spec_digest": "0123456789ab",
    }
    return Fingerprint.model_validate({**base, **changes})


def test_the_key_is_short_stable_and_follows_every_comparability_field() -> None:
    fp = fingerprint()
    assert fp.key() == fingerprint().key() and len(fp.key()) == 12
    assert fp.key() == Fingerprint.model_validate_json(fp.model_dump_json()).key()
    for field, value in [
        ("runner_class", "smoke"),
        ("runner_platform", "fargate"),
        ("instance_type", "m6i.2xlarge"),
        ("cpu_model", "AMD EPYC 7R13 Processor"),
        ("engine_version", "PostgreSQL 16.4 on x86_64-pc-linux-gnu"),
        ("target_class", "db.r6g.xlarge"),
        ("storage", "gp2 100 GiB"),
        ("spec_digest", "ba9876543210"),
        ("target_az_id", "euw1-az1"),  # same AZ -> cross-AZ
    ]:
        assert fingerprint(**{field: value}).key() != fp.key(), field


def test_cpu_count_kernel_and_the_az_names_do_not_cut_a_series() -> None:
    """Same machine type and same AZ relation: a kernel patch or another pair of same-AZ zones is
    shown, not a new series."""
    fp = fingerprint()
    moved = fingerprint(cpu_count=16, kernel="6.1.1-aws", runner_az_id="euw1-az3", target_az_id="euw1-az3")
    assert moved.az_relation == fp.az_relation == "same-az"
    assert moved.key() == fp.key()
    assert moved.changes(fp) == [
        "cpu_count 8 -> 16",
        "kernel 6.1.0-aws -> 6.1.1-aws",
        "runner_az_id euw1-az2 -> euw1-az3",
        "target_az_id euw1-az2 -> euw1-az3",
    ]


def test_changes_name_each_field_old_to_new() -> None:
    new = fingerprint(engine_version="PostgreSQL 16.4", storage=None)
    old = fingerprint(engine_version="PostgreSQL 16.3")
    assert new.changes(old) == [
        "engine_version PostgreSQL 16.3 -> PostgreSQL 16.4",
        "storage gp3 400 GiB 12000 IOPS -> none",
    ]
    assert new.changes(new) == []
    assert fingerprint(runner_az_id=None).az_relation == "same-az"  # the names stand in for the ids
    assert fingerprint(runner_az_id=None, runner_az=None).az_relation == "unknown"


def test_an_older_document_without_the_new_fields_still_parses() -> None:
    record = make_run("s", "old", [("c1", {}, noisy_series(1000, 10))])
    raw = record.cells[0].phases["run"].model_dump(mode="json")
    del raw["fingerprint"], raw["network_floor"]
    doc = ResultDocument.parse(raw)
    assert doc.fingerprint is None and doc.network_floor is None


def test_the_spec_digest_covers_what_is_measured_only() -> None:
    spec = load_spec(EXAMPLES / "exp3-rds-mysql-storage.aws.yaml")
    digest = spec_digest(spec)
    assert (
        digest == spec_digest(load_spec(EXAMPLES / "exp3-rds-mysql-storage.aws.yaml")) and len(digest) == 12
    )
    renamed = spec.model_copy(update={"name": "other-name", "description": "words", "tags": {"team": "db"}})
    assert spec_digest(renamed) == digest  # naming and labelling measure nothing
    more_threads = spec.model_copy(deep=True)
    more_threads.workload.phases.run.threads = (spec.workload.phases.run.threads or 1) + 7
    assert spec_digest(more_threads) != digest
    explicit = spec.model_copy(deep=True)
    explicit.runner.count = 1  # writing a default out changes nothing
    assert spec_digest(explicit) == digest


def test_the_plan_context_labels_the_runner_class_by_platform() -> None:
    spec = load_spec(EXAMPLES / "exp3-rds-mysql-storage.aws.yaml")  # a measured runner, c6i.xlarge
    facts: dict[str, str | None] = {
        "target_az": "eu-west-1a",
        "target_class": "db.m5.large",
        "storage": "gp2 100 GiB",
    }
    context = plan_context(spec, facts)
    assert (context.runner_class, context.runner_platform, context.instance_type) == (
        "measured",
        "ec2",
        "c6i.xlarge",
    )
    assert (context.target_az, context.target_class, context.storage) == (
        "eu-west-1a",
        "db.m5.large",
        "gp2 100 GiB",
    )
    assert context.spec_digest == spec_digest(spec)
    smoke = spec.model_copy(deep=True)
    smoke.runner = type(spec.runner).model_validate({"class": "smoke", "size": {"cpu": 4}})
    context = plan_context(smoke, facts)
    assert (context.runner_class, context.runner_platform, context.instance_type) == (
        "smoke",
        "fargate",
        None,
    )
    assert context.spec_digest != spec_digest(spec)  # the runner section is measured


def test_nearest_rank_percentiles_of_the_floor() -> None:
    samples = sorted(range(1000, 201_000, 1000))  # 200 samples, 1..200 us
    assert percentile_us(samples, 50) == 100.0
    assert percentile_us(samples, 99) == 198.0
    assert percentile_us([5000], 99) == 5.0


def _stamped(record: RunRecord, fp: Fingerprint) -> RunRecord:
    for cell in record.cells:
        for doc in cell.phases.values():
            doc.fingerprint = fp
    return record


def test_a_changed_engine_version_gets_no_faster_or_slower_verdict_and_names_the_change() -> None:
    history = [
        _stamped(
            make_run(
                "s",
                f"h{i}",
                [("c1", {}, noisy_series(2000, 60, seed=i))],
                started_at=EPOCH.replace(day=1 + i),
                seed=i,
            ),
            fingerprint(),
        )
        for i in range(5)
    ]
    upgraded = fingerprint(engine_version="PostgreSQL 16.4 on x86_64-pc-linux-gnu")
    slower = _stamped(
        make_run("s", "new", [("c1", {}, noisy_series(1400, 60, seed=50))], started_at=EPOCH.replace(day=20)),
        upgraded,
    )
    verdict = compare_with_history(slower, history)
    assert verdict.kind not in ("faster", "slower", "no_change"), verdict.message
    assert verdict.message.startswith("fingerprint changed: engine_version PostgreSQL 16.3")
    assert verdict.fingerprint_changes == [
        "engine_version PostgreSQL 16.3 on x86_64-pc-linux-gnu -> PostgreSQL 16.4 on x86_64-pc-linux-gnu"
    ]
    assert verdict.cells[0].fingerprint_changes == verdict.fingerprint_changes
    # the same drop on the same fingerprint is a regression: the cut is what hid it above
    same = _stamped(
        make_run(
            "s", "new2", [("c1", {}, noisy_series(1400, 60, seed=50))], started_at=EPOCH.replace(day=20)
        ),
        fingerprint(),
    )
    assert compare_with_history(same, history).kind == "slower"


def test_history_on_two_fingerprints_compares_only_the_same_one_and_says_so() -> None:
    old = fingerprint(storage="gp2 100 GiB")
    history = [
        _stamped(
            make_run("s", f"h{i}", [("c1", {}, noisy_series(900 if i < 2 else 2000, 60, seed=i))],
                     started_at=EPOCH.replace(day=1 + i), seed=i),
            old if i < 2 else fingerprint(),
        )
        for i in range(6)
    ]  # fmt: skip
    new = _stamped(
        make_run("s", "new", [("c1", {}, noisy_series(2000, 60, seed=60))], started_at=EPOCH.replace(day=20)),
        fingerprint(),
    )
    verdict = compare_with_history(new, history)
    assert verdict.kind == "no_change", verdict.message  # the gp2 nights at 900 ops/s are not the baseline
    assert (
        "compared only with runs on the same fingerprint (2 on another left out: storage gp2 100 GiB -> gp3"
        in verdict.message
    )
    # results written before fingerprints existed stay comparable
    for record in history:
        _stamped(record, None)  # type: ignore[arg-type]
    assert compare_with_history(new, history[2:]).kind == "no_change"


def test_explicit_compare_of_two_runs_on_different_fingerprints_is_not_a_verdict() -> None:
    a = _stamped(
        make_run("s", "a", [("c1", {}, noisy_series(2000, 60, seed=1))], repeats=3, seed=1), fingerprint()
    )
    b = _stamped(
        make_run("s", "b", [("c1", {}, noisy_series(1500, 60, seed=2))], repeats=3, seed=2),
        fingerprint(runner_platform="fargate", runner_class="smoke", instance_type="fargate, host unknown"),
    )
    verdict = compare_runs(b, a)
    assert verdict.kind == "no_history"
    assert verdict.message.startswith("fingerprint changed: runner_class measured -> smoke")


@pytest.mark.parametrize("relation", ["same-az", "cross-az"])
def test_az_relation_reads_the_ids(relation: str) -> None:
    target = "euw1-az2" if relation == "same-az" else "euw1-az1"
    assert fingerprint(target_az_id=target).az_relation == relation


def test_a_floor_that_cannot_be_taken_says_why_without_the_password() -> None:
    from benchwright.runner.floor import network_floor
    from benchwright.runner.plan import PhaseConfig

    props = {"postgres.url": "postgresql://bench:s3cretpw@127.0.0.1:1/bench", "postgres.connect_timeout": "1"}
    floor, why = network_floor(PhaseConfig(workload="ycsb", phase="run", engine="postgres", properties=props))
    assert floor is None and why is not None
    assert why.startswith("TargetUnreachable") and "127.0.0.1:1" in why and "s3cretpw" not in why
    assert network_floor(PhaseConfig(workload="ycsb", phase="load", engine="postgres", properties=props)) == (
        None,
        None,
    )
    assert network_floor(PhaseConfig(workload="ycsb", phase="run", engine="null")) == (None, None)


def test_storage_in_words() -> None:
    from benchwright.providers.aws.targets.base import storage_text

    assert storage_text("gp2", 100, None) == "gp2 100 GiB"
    assert storage_text("gp3", 400, 12000) == "gp3 400 GiB 12000 IOPS"
    assert storage_text("gp3", 400, 12000, 500) == "gp3 400 GiB 12000 IOPS 500 MiB/s"


def test_a_smoke_and_a_measured_run_of_one_spec_get_no_verdict_against_each_other() -> None:
    """Issue 27 part 1: the class comes from the spec (runner.class), the plan context labels it, and
    the comparison is cut on it, saying why, even when the smoke run looks much faster or slower."""
    from benchwright.spec import parse_spec
    from benchwright.spec.model import spec_dict

    base = spec_dict(load_spec(EXAMPLES / "exp3-rds-mysql-storage.aws.yaml"))
    base["runner"] = {"placement": "same-az"}  # no class: measured by default
    facts: dict[str, str | None] = {"target_az": "eu-west-1a", "target_class": "db.m5.large"}
    labelled = {}
    for cls in ("measured", "smoke"):
        spec = parse_spec({**base, "runner": {**base["runner"], "class": cls}} if cls == "smoke" else base)
        context = plan_context(spec, facts)
        labelled[cls] = fingerprint(
            runner_class=context.runner_class,
            runner_platform=context.runner_platform,
            instance_type=context.instance_type if cls == "measured" else "fargate, host unknown",
            spec_digest=context.spec_digest,
        )
    assert (labelled["measured"].runner_class, labelled["measured"].instance_type) == (
        "measured",
        "c6i.large",
    )
    assert (labelled["smoke"].runner_class, labelled["smoke"].runner_platform) == ("smoke", "fargate")
    assert labelled["smoke"].key() != labelled["measured"].key()

    history = [
        _stamped(
            make_run("s", f"h{i}", [("c1", {}, noisy_series(2000, 60, seed=i))],
                     started_at=EPOCH.replace(day=1 + i), seed=i),
            labelled["measured"],
        )
        for i in range(5)
    ]  # fmt: skip
    smoke = _stamped(
        make_run(
            "s", "smoke", [("c1", {}, noisy_series(1200, 60, seed=40))], started_at=EPOCH.replace(day=20)
        ),
        labelled["smoke"],
    )
    verdict = compare_with_history(smoke, history)
    assert verdict.kind not in ("faster", "slower", "no_change"), verdict.message
    assert verdict.message.startswith("fingerprint changed: runner_class measured -> smoke"), verdict.message
    assert "runner_platform ec2 -> fargate" in verdict.fingerprint_changes
    explicit = compare_runs(smoke, history[-1])
    assert explicit.kind == "no_history"
    assert explicit.message.startswith("fingerprint changed: runner_class measured -> smoke")
