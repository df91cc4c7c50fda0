"""TPC-C consistency conditions 1-4 (clause 3.3.2), checked after a run.

Each condition is one aggregate query per engine that returns the offending rows; an empty answer
means the condition holds for every warehouse / district.
"""

from __future__ import annotations

from typing import Any

from benchwright.runner.drivers.base import SqlDriver

CONDITIONS: dict[int, tuple[str, str]] = {
    1: (
        "W_YTD = sum(D_YTD) for every warehouse",
        "SELECT w_id, w_ytd, s FROM warehouse JOIN (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) d"
        " ON d.d_w_id = w_id WHERE w_ytd <> s",
    ),
    2: (
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for every district",
        "SELECT d_w_id, d_id, d_next_o_id, mo, mno FROM district"
        " JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS mo FROM orders GROUP BY o_w_id, o_d_id) o"
        " ON o.o_w_id = d_w_id AND o.o_d_id = d_id"
        " LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS mno FROM new_order GROUP BY no_w_id, no_d_id) n"
        " ON n.no_w_id = d_w_id AND n.no_d_id = d_id"
        " WHERE d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND mno <> mo)",
    ),
    3: (
        "max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows for every district",
        "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order"
        " GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)",
    ),
    4: (
        "sum(O_OL_CNT) = number of ORDER-LINE rows for every district",
        "SELECT o.o_w_id, o.o_d_id, o.s, l.n FROM"
        " (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o"
        " JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l"
        " ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.s <> l.n",
    ),
}


def check(db: SqlDriver) -> dict[str, Any]:
    """{"1": {"ok": bool, "condition": text, "violations": n, "example": [...]}, ..., "ok": all}"""
    out: dict[str, Any] = {}
    for number, (text, sql) in CONDITIONS.items():
        rows = db.fetchall(sql)
        out[str(number)] = {
            "ok": not rows,
            "condition": text,
            "violations": len(rows),
            "example": [str(v) for v in rows[0]] if rows else [],
        }
    out["ok"] = all(v["ok"] for k, v in out.items() if k != "ok")
    return out
