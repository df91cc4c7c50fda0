"""Short cell ids for the terminal (report/cell_names.py): the varying parameters, abbreviated, unique
within the cells shown together, stable; the full ids stay the keys (store, compare, `show`)."""

from __future__ import annotations

import io
import random
from datetime import timedelta
from pathlib import Path

import pytest
from rich.console import Console

from benchwright.cli import main
from benchwright.judge import judge_run
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.cell_names import MAX_LEN, cut_ids, short_ids
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.report.text import print_summary
from benchwright.spec import expand_matrix, load_suite

EXAMPLES = sorted(Path("examples").glob("*.yaml"))
ARDB = [
    f"instance_type={inst},volume={vol},redisbench.keyspace={keys},redisbench.requests={reqs}"
    for inst, vol in (
        ("t2.micro", "type=gp2/size_gb=200"),
        ("t2.micro", "type=io1/size_gb=200/iops=3000"),
        ("i3.large", "None"),
    )
    for keys, reqs in ((100000, 1000000), (10000000, 10000000))
]


def test_exp4_s_ids_keep_what_varies_abbreviated() -> None:
    names = short_ids(ARDB)
    assert names[ARDB[0]] == "inst=t2.micro,vol=gp2,keys=100k,reqs=1M"
    assert names[ARDB[3]] == "inst=t2.micro,vol=io1/iops=3k,keys=10M,reqs=10M"  # size_gb=200 is shared
    assert names[ARDB[4]] == "inst=i3.large,vol=None,keys=100k,reqs=1M"
    assert max(len(ARDB[0]), 100) > 90 and all(len(s) <= MAX_LEN for s in names.values())


def test_a_parameter_every_cell_shares_is_left_out_and_one_cell_keeps_its_own() -> None:
    ids = ["threads=16,recordcount=62500000", "threads=64,recordcount=62500000"]
    assert short_ids(ids) == {ids[0]: "threads=16", ids[1]: "threads=64"}
    assert short_ids(ids[:1]) == {ids[0]: "threads=16,records=62.5M"}
    assert short_ids(["default"]) == {"default": "default"}


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.name)
def test_every_example_s_cells_get_distinct_short_ids_in_any_order(spec: Path) -> None:
    for bench in load_suite(spec).benchmarks:
        ids = [c.cell_id for c in expand_matrix(bench)]
        names = short_ids(ids)
        assert len(set(names.values())) == len(ids)
        assert all(len(s) <= max(MAX_LEN, len(full)) for full, s in names.items())
        assert short_ids(list(reversed(ids))) == names  # stable: the set decides, not the order


def test_ids_that_abbreviate_or_round_alike_never_share_a_short_id() -> None:
    # given values and keys built to collide once shortened: 1000 vs 1k, recordcount vs records,
    # a value with a comma, long ids cut to the same prefix
    rng = random.Random(7)
    keys = ["recordcount", "records", "a.fieldlength", "b.fieldlength", "tests", "x" * 40]
    values = ["1000", "1k", "01000", "62500000", "62.5M", "set,get", "set", "type=io1/iops=3000", "None"]
    for _ in range(300):
        ids = set()
        for _ in range(rng.randint(2, 12)):
            chosen = rng.sample(keys, rng.randint(1, 4))
            ids.add(",".join(f"{k}={rng.choice(values)}" for k in chosen))
        names = short_ids(ids)
        assert set(names) == ids
        assert len(set(names.values())) == len(ids), names


def test_a_cut_id_names_its_full_id() -> None:
    ids = [f"a_very_long_parameter_name={i},another_long_parameter=x{10**12 + i}" for i in range(3)]
    names = short_ids(ids)
    assert all(len(s) <= MAX_LEN and "~" in s for s in names.values())
    assert cut_ids(names) == {s: full for full, s in names.items()}


@pytest.fixture
def ardb_run() -> object:
    cells = [(cell_id, {}, noisy_series(40_000, 10, seed=i)) for i, cell_id in enumerate(ARDB)]
    return judge_run(make_run("exp4-ardb-ec2", "20261128-101010-abcdef", cells))


def test_the_summary_at_80_columns_shows_short_ids_and_show_spells_out_the_full_ones(
    ardb_run: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = short_ids(ARDB)
    out = io.StringIO()
    print_summary(ardb_run, Console(width=80, file=out, force_terminal=True, color_system=None))  # type: ignore[arg-type]
    text = out.getvalue()
    assert all(f"| {short}" in text or f"│ {short}" in text for short in names.values()), text
    assert not any(full in text for full in ARDB) and max(len(line) for line in text.splitlines()) <= 80
    # `show` lists each short id beside its full id (the key in the store and the result)
    path = tmp_path / "results.sqlite"
    with SQLiteResultStore(path) as store:
        store.save_run(ardb_run)  # type: ignore[arg-type]
    assert main(["show", "exp4-ardb-ec2", "--store", str(path)]) == 0
    shown = capsys.readouterr().out
    assert all(full in shown.replace("\n", "") or full in "".join(shown.split()) for full in ARDB)


def test_history_and_compare_head_their_cells_with_short_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.sqlite"
    with SQLiteResultStore(path) as store:
        for n in range(2):
            cells = [(cell_id, {}, noisy_series(40_000, 10, seed=n)) for cell_id in ARDB[:3]]
            store.save_run(
                judge_run(make_run("ardb", f"night-{n}", cells, started_at=EPOCH + timedelta(days=n)))
            )
    names = short_ids(ARDB[:3])
    assert main(["history", "ardb", "--store", str(path)]) == 0
    history = capsys.readouterr().out
    assert main(["compare", "night-0", "night-1", "--store", str(path)]) == 0
    compare = capsys.readouterr().out
    for text in (history, compare):
        assert all(short in text for short in names.values()), text
        assert not any(full in text for full in ARDB)


def test_validate_shows_the_short_ids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = load_suite("examples/exp2-redis-ycsb-datatypes.local.yaml").benchmarks[0]
    full = [c.cell_id for c in expand_matrix(bench)]
    assert main(["validate", "examples/exp2-redis-ycsb-datatypes.local.yaml"]) == 0
    text = capsys.readouterr().out  # not a terminal: every row on one line
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert [row.split("│")[2].strip() for row in rows] == [short_ids(full)[f] for f in full]
    assert "group=zset,fields=10,fieldlen=1024" in text and not any(f in row for row in rows for f in full)
    legend = [line for line in text.splitlines() if line.startswith("cell ")]
    assert all(any(line.endswith(": " + f) for f in full) for line in legend)  # a cut id: its full id below


def test_the_html_report_shows_short_ids_with_the_full_ones_in_titles_and_a_legend(ardb_run: object) -> None:
    from html import escape

    from benchwright.report.html import render_html

    page = render_html(ardb_run)  # type: ignore[arg-type]
    names = short_ids(ARDB)
    for full, short in names.items():
        assert f'title="{escape(full)}">{escape(short)}</td>' in page, short  # the results table
        assert f'<td class="l">{escape(short)}</td><td class="l">{escape(full)}</td>' in page  # legend
        assert f'<td class="l">{escape(full)}</td><td>' not in page  # never a full id as a row's name


def test_slack_names_cells_by_their_short_ids(ardb_run: object) -> None:
    from benchwright.report.slack import headline_rows

    rows = headline_rows(ardb_run)  # type: ignore[arg-type]
    assert [row.split("`")[1] for row in rows] == [short_ids(ARDB)[full] for full in ARDB]
    assert not any(full in row for row in rows for full in ARDB)


def test_table_by_cell_shows_short_ids_with_a_legend_and_csv_keeps_the_full_ids(ardb_run: object) -> None:
    from benchwright.report.table import build_table, render

    table = build_table([ardb_run], rows=["cell"], metrics=["throughput"])  # type: ignore[list-item]
    names = short_ids(ARDB)
    text = render(table, "md")
    for full, short in names.items():
        assert f"| {short} |" in text and f"- cell {short}: {full}" in text
    html = render(table, "html")
    assert all(
        f"<td>{short}</td>" in html and f"cell {short}: {full}" in html for full, short in names.items()
    )
    csv = render(table, "csv")
    assert all(full in csv for full in ARDB) and not any(f"\n{short}," in csv for short in names.values())
    across = render(build_table([ardb_run], rows=["operation"], cols="cell", metrics=["throughput"]), "md")  # type: ignore[list-item]
    assert all(f"cell={short}" in across for short in names.values())
    assert not any(f"cell={full}" in across for full in ARDB)
