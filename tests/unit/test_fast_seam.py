"""The seam between the event loops and their compiled hot path (runner/fast_seam.py): C reads the
specs' fields by position, so their order is compared with what C expects; a spec of another shape is
refused naming it; _fastloop.c reads no Python attribute by name; and a RESP loop driven through the
seam (a null RESP server on 127.0.0.1, no Redis) ends exactly as the Python loop does."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import hiredis
import pytest

from benchwright.runner import _fastloop, compiled, fast_seam
from benchwright.runner.drivers.resp import encode_command
from benchwright.runner.event_loop import Channel, Connection, EventLoop, Request, reply_not_none
from benchwright.runner.measure import Recorder
from tests.null_resp import NullResp
from tests.statuses import failures_of, statuses_of

SOURCE = Path(compiled.__file__).with_name("_fastloop.c")


def test_the_specs_fields_are_in_the_order_c_reads_them() -> None:
    assert fast_seam.LoopSpec._fields == _fastloop.LOOP_SPEC_FIELDS
    assert fast_seam.ConnectionSpec._fields == _fastloop.CONNECTION_SPEC_FIELDS
    assert fast_seam.HandBack._fields == _fastloop.HANDBACK_FIELDS == _fastloop.HandBack.__match_args__
    assert (fast_seam.PQ, fast_seam.RESP, fast_seam.MY) == (_fastloop.PQ, _fastloop.RESP, _fastloop.MY)
    assert compiled.seam_mismatch(_fastloop) is None


def test_a_build_whose_fields_moved_is_named_as_stale() -> None:
    fields = list(_fastloop.LOOP_SPEC_FIELDS)
    fields[1], fields[2] = fields[2], fields[1]
    stale = SimpleNamespace(**{k: getattr(_fastloop, k) for k in dir(_fastloop) if k.isupper()})
    stale.LOOP_SPEC_FIELDS = tuple(fields)
    found = compiled.seam_mismatch(stale)
    assert found is not None and "LOOP_SPEC_FIELDS" in found and "close_window" in found
    stale.LOOP_SPEC_FIELDS = _fastloop.LOOP_SPEC_FIELDS
    stale.MY = 7
    assert "protocol numbers" in (compiled.seam_mismatch(stale) or "")


def _loop_spec(**changes: Any) -> tuple[Any, ...]:
    recorder = Recorder(time.perf_counter_ns(), "service_time")
    spec = fast_seam.LoopSpec(
        epfd=0,
        handback=lambda *a: None,
        close_window=lambda *a: None,
        record=recorder.record,
        flush=recorder.flush,
        completed=recorder.completed,
        completed_buffers=recorder.completed_buffers,
        not_found=None,
        rows_found=None,
        rows_changed=None,
        not_none=None,
        nonempty=None,
        steps_type=None,
        steps_of=list,
    )
    return spec._replace(**changes)


def test_a_spec_of_another_shape_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match=r"LoopSpec: 13 fields, expected 14"):
        _fastloop.FastLoop(tuple(_loop_spec())[:-1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"LoopSpec\.flush is not callable"):
        _fastloop.FastLoop(_loop_spec(flush=3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LoopSpec"):
        _fastloop.FastLoop(_loop_spec(completed=[]))  # type: ignore[arg-type]
    fast = _fastloop.FastLoop(_loop_spec())  # type: ignore[arg-type]
    conn = fast_seam.ConnectionSpec(None, fast_seam.RESP, 5, iter(()), -1, 0, False, 10**9, 0, None, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ConnectionSpec: 10 fields, expected 11"):
        fast.take(tuple(conn)[:-1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ConnectionSpec\.kind: 9"):
        fast.take(conn._replace(kind=9))
    with pytest.raises(TypeError, match=r"ConnectionSpec\.requests is not an iterator"):
        fast.take(conn._replace(requests=[]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ConnectionSpec\.fd"):
        fast.take(conn._replace(fd=-1))
    assert fast.close() == []
    with pytest.raises(RuntimeError, match="closed"):
        fast.take(conn)


def test_c_reads_no_python_attribute_by_name() -> None:
    """Only the seam's callbacks are called; the one method called by name is ``int.to_bytes`` on the
    generator's bits (``UniformSelects``), a built-in's, not one of ours."""
    code = re.sub(r"/\*.*?\*/", "", SOURCE.read_text(), flags=re.S)
    by_name = re.findall(r"Py\w*(?:GetAttr|SetAttr|HasAttr|CallMethod)\w*\([^;]*", code)
    assert [c for c in by_name if '"to_bytes"' not in c] == []
    assert len(by_name) == 1


def resp(*args: bytes | str) -> bytes:
    data = encode_command(args)
    assert data is not None
    return data


def requests(client: int) -> Iterator[Request]:
    """Every shape the C part runs or hands back: a SET, a GET found and one not (a check C judges
    from the reply's bytes), a pipeline of three, a server error, and last a check C does not know
    (the Python loop then runs the connection's next ``SLOW_BACKOFF`` requests itself)."""
    for n in range(30):
        kind = 5 if n == 29 else n % 5
        if kind == 0:
            yield "SET", resp("SET", f"k{client}:{n}", "v"), 1, None
        elif kind == 1:
            yield "READ", resp("GET", f"k{client}:{n}"), 1, reply_not_none
        elif kind == 2:
            yield "READ", resp("GET", f"missing{client}:{n}"), 1, reply_not_none
        elif kind == 3:
            yield "MSET", b"".join(resp("SET", f"p{client}:{n}:{i}", "v") for i in range(3)), 3, None
        elif kind == 4:
            yield "FAIL", resp("ERR", f"{client}"), 1, None
        else:
            yield "PY", resp("PING"), 1, lambda reply: reply_not_none(reply)


def run_loop(port: int, clients: int) -> tuple[Recorder, dict[str, int], list[int], str]:
    def channel() -> Channel:
        # the parser's class for an error reply named as the driver names it (drivers/redis.py)
        return Channel(
            socket.create_connection(("127.0.0.1", port)), hiredis.Reader(), 10.0, hiredis.ReplyError
        )

    conns = [Connection(channel, lambda: None, requests(i), 30) for i in range(clients)]
    recorder = Recorder(time.perf_counter_ns(), "service_time")
    errors: dict[str, int] = {}
    loop = EventLoop(conns, recorder, time.perf_counter_ns() + 30 * 10**9, threading.Event(), errors, 5.0)
    model = loop.model
    assert loop.run() is None
    for conn in conns:
        assert conn.channel is not None
        conn.channel.sock.close()
    return recorder, errors, [c.issued for c in conns], model


@pytest.mark.parametrize("build", ["compiled", "python"])
def test_a_resp_loop_through_the_seam_ends_as_the_python_loop_does(
    build: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1" if build == "compiled" else "0")
    with NullResp() as server:
        recorder, errors, issued, model = run_loop(server.port, 3)
    assert ("in C" in model) == (build == "compiled")
    assert issued == [30, 30, 30]
    ops = recorder.ops
    assert {name: statuses_of(ops, name) for name in ("SET", "READ", "MSET", "FAIL", "PY")} == {
        "SET": {"OK": 18},
        "READ": {"OK": 18, "NOT_FOUND": 18},
        "MSET": {"OK": 18},
        "FAIL": {"ERROR": 15},
        "PY": {"OK": 3},
    }
    assert failures_of(ops, "FAIL") == 15
    assert errors == {"FAIL:ReplyError": 15}
    # every client's commands reached the server once each, in the order the workload made them
    sent = sorted(server.received, key=lambda log: log[0][1])
    for client, log in enumerate(sent):
        expected = [hiredis_commands(payload) for _, payload, _, _ in requests(client)]
        assert log == [c for commands in expected for c in commands]


def hiredis_commands(payload: bytes) -> list[list[bytes]]:
    reader = hiredis.Reader()
    reader.feed(payload)
    out = []
    while (command := reader.gets()) is not False:
        out.append(list(command))
    return out
