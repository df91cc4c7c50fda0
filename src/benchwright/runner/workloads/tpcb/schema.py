"""pgbench's tables, exactly as `pgbench -i` (PostgreSQL 15) creates and fills them, so results are
comparable: same names, columns, types, keys and fillfactor; primary keys added after the data."""

from __future__ import annotations

from collections.abc import Iterator

ACCOUNTS_PER_BRANCH = 100_000
TELLERS_PER_BRANCH = 10
BIGINT_SCALE = 20_000  # from this scale pgbench makes aid a bigint

TABLES = ("pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches")
RUN_TABLES = ("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history")


def create_statements(dialect: str, scale: int, fillfactor: int) -> list[str]:
    aid = "bigint" if scale >= BIGINT_SCALE else "int"
    columns = {
        "pgbench_history": f"tid int,bid int,aid {aid},delta int,mtime timestamp,filler char(22)",
        "pgbench_tellers": "tid int not null,bid int,tbalance int,filler char(84)",
        "pgbench_accounts": f"aid {aid} not null,bid int,abalance int,filler char(84)",
        "pgbench_branches": "bid int not null,bbalance int,filler char(88)",
    }
    out = []
    for table in TABLES:
        cols = columns[table]
        if dialect == "mysql":
            out.append(f"create table {table}({cols.replace('timestamp', 'datetime')}) engine=InnoDB")
        elif table == "pgbench_history":
            out.append(f"create table {table}({cols})")
        else:
            out.append(f"create table {table}({cols}) with (fillfactor={fillfactor})")
    return out


PRIMARY_KEYS = (
    "alter table pgbench_branches add primary key (bid)",
    "alter table pgbench_tellers add primary key (tid)",
    "alter table pgbench_accounts add primary key (aid)",
)


def branch_rows(scale: int) -> Iterator[tuple[int, int, None]]:
    """filler is NULL for branches and tellers, as pgbench writes them."""
    for bid in range(1, scale + 1):
        yield (bid, 0, None)


def teller_rows(scale: int) -> Iterator[tuple[int, int, int, None]]:
    for i in range(scale * TELLERS_PER_BRANCH):
        yield (i + 1, i // TELLERS_PER_BRANCH + 1, 0, None)


def account_rows(branch: int) -> Iterator[tuple[int, int, int, str]]:
    """One branch's accounts; filler is the empty string (blank-padded to 84), as pgbench writes it."""
    first = (branch - 1) * ACCOUNTS_PER_BRANCH
    for i in range(first, first + ACCOUNTS_PER_BRANCH):
        yield (i + 1, branch, 0, "")


def foreign_keys() -> list[str]:
    """pgbench -I f's constraints (they need the referenced primary keys: step p first)."""
    refs = (
        ("pgbench_tellers", "bid", "pgbench_branches"),
        ("pgbench_accounts", "bid", "pgbench_branches"),
        ("pgbench_history", "bid", "pgbench_branches"),
        ("pgbench_history", "tid", "pgbench_tellers"),
        ("pgbench_history", "aid", "pgbench_accounts"),
    )
    return [
        f"alter table {table} add constraint {table}_{column}_fkey foreign key ({column}) references {ref}"
        for table, column, ref in refs
    ]
