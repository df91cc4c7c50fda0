"""The event-loop client against real Redis servers: every request timed and counted, server errors
and dropped connections counted per request, a killed server ends the loop, and a server that never
answers is a timeout, not a hang. Every test runs twice: with the compiled hot path (the default, built
with the package) and with the Python loop alone (BENCHWRIGHT_COMPILED_LOOP=0)."""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import hiredis
import pytest

from benchwright.runner.drivers.redis import RedisDriver
from benchwright.runner.drivers.resp import encode_command
from benchwright.runner.event_loop import Channel, Connection, EventLoop, Request
from benchwright.runner.measure import Recorder
from benchwright.runner.workloads.base import ThreadInfo
from benchwright.runner.workloads.redisbench.workload import RedisBench
from tests.statuses import failures_of, statuses_of

NS = 1_000_000_000


@pytest.fixture(autouse=True, params=["compiled", "python"])
def loop_build(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1" if request.param == "compiled" else "0")
    return str(request.param)


def resp(*args: bytes | str | int) -> bytes:
    data = encode_command(args)
    assert data is not None
    return data


def connection(driver: RedisDriver, requests: Iterator[Request], limit: int | None) -> Connection:
    def open_channel() -> Channel:
        channel = driver.event_loop_channel()
        assert channel is not None
        return channel

    return Connection(open_channel, driver.recover, requests, limit)


def run(
    connections: list[Connection],
    *,
    seconds: float = 30.0,
    abort_after_s: float = 3.0,
    timeout_s: float = 10.0,
) -> tuple[Recorder, dict[str, int], str | None]:
    recorder = Recorder(time.perf_counter_ns(), "service_time")
    errors: dict[str, int] = {}
    deadline = time.perf_counter_ns() + int(seconds * NS)
    loop = EventLoop(connections, recorder, deadline, threading.Event(), errors, abort_after_s)
    compiled = os.environ["BENCHWRIGHT_COMPILED_LOOP"] == "1"
    assert loop.model == ("event loop (RESP hot path in C)" if compiled else "event loop"), loop.model
    reason = loop.run()
    return recorder, errors, reason


def test_every_request_of_every_connection_is_sent_timed_and_counted(redis_props: dict[str, str]) -> None:
    drivers = [RedisDriver(redis_props, i) for i in range(8)]
    for d in drivers:
        d.connect()
    drivers[0].command("FLUSHDB")

    def requests(i: int) -> Iterator[Request]:
        for n in range(25):  # a pipeline of 4 SETs per request
            yield "SET", b"".join(resp("SET", f"ev:{i}:{n}:{k}", "v" * 100) for k in range(4)), 4, None

    conns = [connection(d, requests(i), 25) for i, d in enumerate(drivers)]
    recorder, errors, reason = run(conns)
    assert reason is None and errors == {}
    assert recorder.ops["SET"].statuses == {"OK": 200}
    assert recorder.ops["SET"].histogram.get_min_value() >= 1
    assert drivers[0].command("DBSIZE") == 8 * 25 * 4
    for d in drivers:
        d.close()


def test_a_server_error_is_one_failed_request_and_the_connection_goes_on(redis_props: dict[str, str]) -> None:
    driver = RedisDriver(redis_props)
    driver.connect()
    driver.command("SET", "ev:text", "not a number")
    bad = resp("SET", "ev:n", 1) + resp("INCR", "ev:text") + resp("INCR", "ev:n")
    good = resp("GET", "ev:n")
    requests: list[Request] = [
        ("INCR", bad, 3, None),
        ("GET", good, 1, None),
        ("INCR", bad, 3, None),
        ("GET", good, 1, None),
    ]
    recorder, errors, reason = run([connection(driver, iter(requests), None)])
    assert reason is None
    assert errors == {"INCR:ResponseError": 2}
    assert "INCR" not in recorder.ops  # every INCR failed: only its -FAILED entry, never throughput
    assert recorder.ops["INCR-FAILED"].statuses == {"ERROR": 2}
    assert recorder.ops["INCR-FAILED"].histogram.get_total_count() == 2
    assert recorder.ops["GET"].statuses == {"OK": 2}  # no reply of the failed pipelines was left behind
    assert driver.command("GET", "ev:n") == b"2"
    driver.close()


def test_ok_requests_of_many_operation_names_are_all_counted_in_the_order_they_ended(
    redis_props: dict[str, str],
) -> None:
    """The C part buffers the OK requests of up to 16 operation names and hands them to the recorder
    before anything Python runs; a 17th name and on go to the recorder at once. Every request is
    counted under its own name either way, with an error recorded (through Python) between them."""
    driver = RedisDriver(redis_props)
    driver.connect()
    driver.command("SET", "ev:text", "not a number")
    names = [f"OP{i:02d}" for i in range(24)]
    requests: list[Request] = [(names[n % 24], resp("PING"), 1, None) for n in range(24 * 40)]
    requests.insert(500, ("BAD", resp("INCR", "ev:text"), 1, None))
    recorder, errors, reason = run([connection(driver, iter(requests), None)])
    assert reason is None
    assert errors == {"BAD:ResponseError": 1}
    ops = recorder.ops
    assert {name: ops[name].statuses for name in names} == {name: {"OK": 40} for name in names}
    assert "BAD" not in ops and ops["BAD-FAILED"].statuses == {"ERROR": 1}
    assert recorder.total_operations() == 24 * 40  # successes only: the failed one is not progress
    driver.close()


def test_a_killed_server_fails_requests_and_ends_the_loop(
    private_redis: tuple[subprocess.Popen[bytes], dict[str, str]],
) -> None:
    proc, props = private_redis
    drivers = [RedisDriver(props, i) for i in range(4)]
    for d in drivers:
        d.connect()
    killed = threading.Event()

    def endless(i: int) -> Iterator[Request]:
        for n in itertools.count():
            if i == 0 and n == 200 and not killed.is_set():
                proc.kill()  # from inside the load: the loop is mid-run, with requests in flight
                proc.wait()
                killed.set()
            yield "GET", resp("GET", f"k{n}"), 1, None

    conns = [connection(d, endless(i), None) for i, d in enumerate(drivers)]
    recorder, errors, reason = run(conns, seconds=60, abort_after_s=0.5)
    assert killed.is_set()
    assert reason is not None and "every operation failed" in reason
    statuses = statuses_of(recorder.ops, "GET")
    assert statuses["OK"] >= 199 and statuses["ERROR"] >= 1
    assert recorder.ops["GET"].histogram.get_total_count() == statuses["OK"]  # failures' latency apart
    assert recorder.ops["GET-FAILED"].histogram.get_total_count() == statuses["ERROR"]
    assert set(errors) <= {"GET:ConnectionError"} and sum(errors.values()) == statuses["ERROR"]


def test_a_server_that_never_answers_is_a_timeout_not_a_hang() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        accepted: list[socket.socket] = []

        def open_channel() -> Channel:
            import hiredis

            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            accepted.append(listener.accept()[0])  # the peer takes the bytes and says nothing
            return Channel(sock, hiredis.Reader(), reply_timeout_s=0.2)

        def drop() -> None:
            return None

        requests = iter([("GET", resp("GET", "x"), 1, None)] * 3)
        conn = Connection(open_channel, drop, requests, None)
        recorder, errors, reason = run([conn], abort_after_s=0.3)
        for sock in accepted:
            sock.close()
    assert errors.get("GET:TimeoutError", 0) >= 1
    assert "GET" not in recorder.ops  # nothing succeeded: no GET entry, only its failures
    assert failures_of(recorder.ops, "GET") == sum(errors.values())
    assert recorder.total_operations() == 0
    assert reason is not None


def test_stop_flag_and_deadline_end_an_endless_phase_with_nothing_in_flight(
    redis_props: dict[str, str],
) -> None:
    driver = RedisDriver(redis_props)
    endless: Iterator[Request] = (("PING", resp("PING"), 1, None) for _ in itertools.count())
    conn = connection(driver, endless, None)
    recorder, errors, reason = run([conn], seconds=0.3)
    assert reason is None and errors == {}
    done = recorder.ops["PING"].statuses["OK"]
    assert done >= 1 and conn.issued == done  # every request sent was answered and recorded
    driver.close()


def test_redis_bench_requests_are_what_its_threaded_operations_send(redis_props: dict[str, str]) -> None:
    """One source of requests for both client models: the same bytes from the same seed."""
    workload = RedisBench(
        {"redisbench.tests": "set,get", "redisbench.requests": "40", "redisbench.pipeline": "4"}
    )
    thread = ThreadInfo(index=1, count=2, seed=random.Random(3).randrange(1 << 30))
    wire = list(workload.wire_requests("run", RedisDriver(redis_props), thread) or [])
    assert [(n, c, check) for n, _, c, check in wire] == [("SET", 4, None)] * 5 + [("GET", 4, None)] * 5

    class Capture(RedisDriver):
        def send_encoded(self, data: bytes, count: int) -> list[bytes]:
            sent.append((data, count))
            return [b"OK"] * count

    sent: list[tuple[bytes, int]] = []
    for _, call in workload.operations("run", Capture(redis_props), thread):
        call()
    assert sent == [(d, c) for _, d, c, _ in wire]


def test_tls_connections_stay_on_threads() -> None:
    driver = RedisDriver({"redis.host": "127.0.0.1", "redis.port": "1", "redis.tls": "true"})
    assert driver.event_loop_channel() is None  # decided before any connection is attempted


def test_a_check_decides_the_status_sends_follow_ups_and_a_failing_check_fails_one_request(
    redis_props: dict[str, str],
) -> None:
    """NOT_FOUND from the reply, a second round trip inside the same timed request, and a check that
    raises on an unexpected reply: that request is an error and the next ones stay aligned."""
    from benchwright.runner.measure import Status

    driver = RedisDriver(redis_props)
    driver.connect()
    driver.command("SET", "ev:present", "1")
    driver.command("DEL", "ev:counter")  # each parametrization starts from 0

    def found(reply: object) -> Status:
        return Status.OK if reply is not None else Status.NOT_FOUND

    def then_read(reply: object) -> object:
        assert reply == 1  # the INCR's reply
        return resp("GET", "ev:present") + resp("GET", "ev:missing"), 2, found

    def broken(reply: object) -> Status:
        raise ValueError(f"unexpected {reply!r}")

    requests: list[Request] = [
        ("GET", resp("GET", "ev:missing"), 1, found),
        ("GET", resp("GET", "ev:present"), 1, found),
        ("INCR-GET", resp("INCR", "ev:counter"), 1, then_read),
        ("PING", resp("PING"), 1, broken),
        ("GET", resp("GET", "ev:present"), 1, found),
    ]
    recorder, errors, reason = run([connection(driver, iter(requests), None)])
    assert reason is None
    assert recorder.ops["GET"].statuses == {"OK": 2, "NOT_FOUND": 1}
    assert recorder.ops["INCR-GET"].statuses == {"NOT_FOUND": 1}  # the last reply of its second step
    assert "PING" not in recorder.ops and recorder.ops["PING-FAILED"].statuses == {"ERROR": 1}
    assert errors == {"PING:ValueError": 1}
    driver.close()


class ScriptedServer:
    """A RESP peer on 127.0.0.1 that answers ``+OK`` to the first ``answered`` commands of each
    connection (one command per request here), then sends ``after`` (b"": nothing) to the next and
    stays silent; what the C part meets mid-run, after the Python loop has sent the first request."""

    def __init__(self, answered: int, after: bytes) -> None:
        self.answered, self.after = answered, after
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.peers: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                peer, _ = self.listener.accept()
                self.peers.append(peer)
                threading.Thread(target=self._answer, args=(peer,), daemon=True).start()

    def _answer(self, peer: socket.socket) -> None:
        reader, seen = hiredis.Reader(), 0
        with contextlib.suppress(OSError):
            while data := peer.recv(65536):
                reader.feed(data)
                while reader.gets() is not False:
                    seen += 1
                    if seen <= self.answered:
                        peer.sendall(b"+OK\r\n")
                    elif seen == self.answered + 1 and self.after:
                        peer.sendall(self.after)

    def channel(self) -> Channel:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
        return Channel(sock, hiredis.Reader(), reply_timeout_s=0.2)

    def close(self) -> None:
        self.listener.close()
        for peer in self.peers:
            peer.close()


def scripted_run(server: ScriptedServer, requests: int) -> tuple[Recorder, dict[str, int], str | None]:
    pings: Iterator[Request] = iter([("PING", resp("PING"), 1, None)] * requests)
    conn = Connection(server.channel, lambda: None, pings, None)
    try:
        return run([conn], seconds=20, abort_after_s=60)
    finally:
        server.close()


def test_a_reply_that_stops_coming_mid_run_is_a_timeout_and_the_connection_is_reopened() -> None:
    """Five answers, then silence: the sixth request times out (on the C part, it is the one that
    holds the connection by then) and the next ones go out on a new connection."""
    recorder, errors, reason = scripted_run(ScriptedServer(answered=5, after=b""), requests=8)
    assert reason is None
    ping = recorder.ops["PING"]
    assert ping.statuses["OK"] >= 7  # 5, then the new connection's answers
    assert errors == {"PING:TimeoutError": 1}
    assert failures_of(recorder.ops, "PING") == 1
    # the 0.2 s the failed one waited (in us) is in its own histogram, not in the successes'
    assert recorder.ops["PING-FAILED"].histogram.get_max_value() >= 200_000
    assert ping.histogram.get_total_count() == ping.statuses["OK"]


def test_bytes_that_are_not_resp_mid_run_fail_that_request_and_the_connection_is_reopened() -> None:
    """Five answers, then bytes no RESP reply starts with: that request fails under the name the
    channel's parser gives the error (hiredis: ProtocolError) and the connection is replaced."""
    recorder, errors, reason = scripted_run(ScriptedServer(answered=5, after=b"?garbage\r\n"), requests=8)
    assert reason is None
    assert errors == {"PING:ProtocolError": 1}
    assert recorder.ops["PING"].statuses == {"OK": 7}
    assert recorder.ops["PING-FAILED"].statuses == {"ERROR": 1}
    assert statuses_of(recorder.ops, "PING") == {"OK": 7, "ERROR": 1}
