"""The rehearsal's Lambda sandboxes, on a small asset of their own (the real asset and the rehearsal end
to end: tests/infra/test_bundling.py, tests/rehearse/): one interpreter per sandbox that imports only
its asset, the function's environment and nothing of ours, warm reuse, scale-out, the timeout."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchwright.rehearse.asset import Asset, interpreter
from benchwright.rehearse.lambda_pool import FunctionConfig, LambdaPool, lambda_environment

HANDLERS = """
import os, sys, time
import helper  # a module of the asset itself

def echo(event, context):
    print("log line from", context.function_name)
    return {"event": event, "path": sys.path, "env": sorted(os.environ), "pid": os.getpid(),
            "remaining": context.get_remaining_time_in_millis(), "helper": helper.VALUE,
            "request": context.aws_request_id}

def fail(event, context):
    raise ValueError("bad input: field x")

def slow(event, context):
    time.sleep(event["s"])
    return {"slept": event["s"]}

def wrong(event, context):
    return {"not json": {1, 2}}

def venv_import(event, context):
    import pytest  # in our venv, not in the asset
    return "imported"
"""


@pytest.fixture
def asset(tmp_path: Path) -> Asset:
    root = tmp_path / "asset"
    (root / "functions").mkdir(parents=True)
    (root / "functions" / "__init__.py").write_text("")
    (root / "functions" / "h.py").write_text(HANDLERS)
    (root / "helper.py").write_text("VALUE = 42\n")
    return Asset(root, "hash0", interpreter())


def _pool(asset: Asset, tmp_path: Path, timeout_s: float = 5.0) -> LambdaPool:
    def config(name: str) -> FunctionConfig:
        env = lambda_environment(name, f"functions.h.{name}", 512, "us-east-1", asset, {"OWN": "1"}, {})
        arn = f"arn:aws:lambda:us-east-1:123456789012:function:{name}"
        return FunctionConfig(name, arn, f"functions.h.{name}", timeout_s, 512, env)

    return LambdaPool(asset, tmp_path / "lambda.log", config)


def test_a_handler_runs_from_its_asset_alone_with_its_own_environment(
    asset: Asset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CANARY", "ours")  # the rehearsal's process: never the sandbox's
    pool = _pool(asset, tmp_path)
    try:
        first = pool.invoke("echo", {"a": 1})
        second = pool.invoke("echo", {"a": 2})
    finally:
        pool.close()
    assert first.ok and second.ok
    assert first.payload["event"] == {"a": 1} and first.payload["helper"] == 42
    assert first.payload["path"][0] == str(asset.path)
    assert not any("site-packages" in p or ".venv" in p for p in first.payload["path"]), first.payload["path"]
    env = set(first.payload["env"])
    assert {"OWN", "AWS_LAMBDA_FUNCTION_NAME", "LAMBDA_TASK_ROOT"} <= env and "BENCHWRIGHT_CANARY" not in env
    assert 0 < first.payload["remaining"] <= 5000
    # warm: the second invocation reuses the sandbox, and only the first paid the cold start
    assert second.payload["pid"] == first.payload["pid"] == first.pid
    assert first.init_s is not None and second.init_s is None
    assert first.payload["request"] != second.payload["request"]
    assert pool.started == 1
    assert "log line from echo" in (tmp_path / "lambda.log").read_text()


def test_errors_come_back_as_function_errors(asset: Asset, tmp_path: Path) -> None:
    pool = _pool(asset, tmp_path)
    try:
        failed = pool.invoke("fail", {})
        unmarshalled = pool.invoke("wrong", {})
        missing = pool.invoke("venv_import", {})
    finally:
        pool.close()
    assert not failed.ok and failed.payload == {
        "errorType": "ValueError",
        "errorMessage": "bad input: field x",
    }
    assert not unmarshalled.ok and unmarshalled.payload["errorType"] == "Runtime.MarshalError"
    # a package that is only in our venv is not importable in the sandbox: a missing dependency fails here
    assert not missing.ok and missing.payload["errorType"] == "ModuleNotFoundError", missing.payload
    assert (
        "ValueError: bad input" in (tmp_path / "lambda.log").read_text()
    )  # the traceback, as Lambda logs it


def test_a_handler_past_its_timeout_is_killed_and_the_next_call_starts_cold(
    asset: Asset, tmp_path: Path
) -> None:
    pool = _pool(asset, tmp_path, timeout_s=1.0)
    try:
        timed_out = pool.invoke("slow", {"s": 30})
        again = pool.invoke("slow", {"s": 0})
    finally:
        pool.close()
    assert not timed_out.ok
    assert timed_out.payload["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in timed_out.payload["errorMessage"]
    assert 1.0 <= timed_out.seconds < 10
    assert again.ok and again.pid != timed_out.pid and again.init_s is not None


def test_concurrent_invocations_scale_out_to_separate_sandboxes(asset: Asset, tmp_path: Path) -> None:
    pool = _pool(asset, tmp_path)
    results = []
    barrier = threading.Barrier(2)

    def call() -> None:
        barrier.wait(timeout=10)
        results.append(pool.invoke("slow", {"s": 1}))

    try:
        threads = [threading.Thread(target=call) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(results) == 2 and all(r.ok for r in results)
        assert results[0].pid != results[1].pid and pool.started == 2
        assert pool.invoke("slow", {"s": 0}).pid in {r.pid for r in results}  # and both stay warm
    finally:
        pool.close()
