"""What a run was measured on, in words, for every view (``show``, the HTML report, Slack): the
fingerprint of each measured phase and the network floor taken before it. Cells measured on the
same fingerprint are said once; a run whose cells differ says each."""

from __future__ import annotations

from benchwright.results import Fingerprint, NetworkFloor
from benchwright.runs import RunRecord


def fingerprint_facts(fp: Fingerprint) -> list[tuple[str, str]]:
    """The fingerprint as (label, value) rows, the way a reader looks for them."""
    machine = fp.instance_type or fp.runner_platform
    runner = f"{fp.runner_class} runner on {machine}: {fp.cpu_count} x {fp.cpu_model or 'unknown CPU'}"
    rows = [
        ("runner", runner),
        ("kernel", fp.kernel or "unknown"),
        ("engine version", fp.engine_version or "not reported"),
        ("target class", fp.target_class or "-"),
        ("storage", fp.storage or "-"),
    ]
    if fp.runner_az or fp.runner_az_id or fp.target_az or fp.target_az_id:
        rows.append(
            (
                "placement",
                f"runner {_az(fp.runner_az, fp.runner_az_id)}, target {_az(fp.target_az, fp.target_az_id)}"
                f" ({fp.az_relation})",
            )
        )
    rows.append(("fingerprint", f"{fp.key()} (spec digest {fp.spec_digest or '-'})"))
    return rows


def _az(name: str | None, az_id: str | None) -> str:
    if name and az_id:
        return f"{name} / {az_id}"
    return name or az_id or "unknown AZ"


def floor_text(floor: NetworkFloor) -> str:
    return (
        f"{floor.command} x{floor.round_trips} on one connection: p50 {floor.p50_us:,.0f} us, "
        f"p99 {floor.p99_us:,.0f} us, max {floor.max_us:,.0f} us"
    )


def floor_short(floor: NetworkFloor) -> str:
    """The floor in a Slack line: "floor p50/p99 85/140 us"."""
    return f"floor p50/p99 {floor.p50_us:,.0f}/{floor.p99_us:,.0f} us"


def measured_on(record: RunRecord) -> list[tuple[str, list[tuple[str, str]]]]:
    """(cells, rows) per distinct fingerprint of the run's measured phases, with the floor of each
    cell; cells are named "all cells" when one fingerprint holds them all."""
    groups: dict[str, tuple[Fingerprint, list[str]]] = {}
    floors: list[tuple[str, NetworkFloor]] = []
    for cell in record.cells:
        doc = cell.measured
        if doc is None:
            continue
        where = cell.cell_id if cell.repeat == 0 else f"{cell.cell_id} r{cell.repeat}"
        if doc.fingerprint is not None:
            groups.setdefault(doc.fingerprint.key(), (doc.fingerprint, []))[1].append(where)
        if doc.network_floor is not None:
            floors.append((where, doc.network_floor))
    out = []
    for fp, places in groups.values():
        label = "all cells" if len(groups) == 1 else ", ".join(places)
        rows = fingerprint_facts(fp)
        rows += [
            (f"network floor ({w})" if len(floors) > 1 else "network floor", floor_text(f))
            for w, f in floors
            if w in places
        ]
        out.append((label, rows))
    if not groups and floors:
        out.append(("all cells", [(f"network floor ({w})", floor_text(f)) for w, f in floors]))
    return out
