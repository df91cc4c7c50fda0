"""Lambda sandboxes for a rehearsal: one interpreter process per warm container, its import path only
the function's built asset.

Each process is started as Lambda starts a sandbox: ``python -I -S`` (no venv, no site-packages, no
checkout), the asset first on sys.path and as working directory, and an environment made of the
function's own variables from the template plus what the Lambda runtime sets, nothing of the
rehearsal's process. It imports the handler once (the cold start, timed as init) and then serves one
invocation at a time over a pipe; what the handler prints goes to DIR/lambda.log (CloudWatch Logs).
A pool per function keeps idle processes warm and starts another when all are busy, as Lambda scales
out. An invocation past the function's timeout kills its process, and the Invoke answers the function
error Lambda gives (``Sandbox.Timedout``); a process that dies answers ``Runtime.ExitError``.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.rehearse.asset import Asset

INIT_LIMIT_S = 60.0  # Lambda allows 10 s of init; this machine is shared, so a cold start gets more
MAX_PER_FUNCTION = 8  # concurrent sandboxes of one function (a suite's Map runs cells side by side)
PRICES_ENV = "BENCHWRIGHT_REHEARSAL_PRICES"  # read and removed by the bootstrap before the handler runs

# The sandbox's runtime: stdlib only until the asset is on the path. Protocol: one JSON line per
# message; "ready" after init, then one answer per request.
BOOTSTRAP = r"""
import importlib, json, os, sys, time, traceback
asset, rfd, wfd, handler = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, asset)
prices = os.environ.pop("BENCHWRIGHT_REHEARSAL_PRICES", "")
reader, writer = os.fdopen(rfd, "rb"), os.fdopen(wfd, "wb", buffering=0)
started = time.monotonic()
module, name = handler.rsplit(".", 1)
init_error = None
try:
    function = getattr(importlib.import_module(module), name)
    if prices:  # the Price List API has no moto backend: the rehearsal's price book stands in for it
        import functions._common as common
        from benchwright.providers.aws.pricelist import PackagedPriceList
        from benchwright.providers.aws.pricing import AwsPriceBook, ExcerptPriceList
        source = PackagedPriceList() if prices == "packaged" else ExcerptPriceList.from_directory(prices)
        common.injected["prices"] = AwsPriceBook(source)
except Exception as exc:
    traceback.print_exc()
    init_error = {"errorType": "Runtime.ImportModuleError", "errorMessage": f"Unable to import module {module!r}: {exc}"}


class Context:
    def __init__(self, request):
        self.function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = int(os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
        self.invoked_function_arn = request["arn"]
        self.aws_request_id = request["request_id"]
        self.log_group_name = os.environ["AWS_LAMBDA_LOG_GROUP_NAME"]
        self.log_stream_name = "rehearsal"
        self._deadline = time.monotonic() + request["timeout_s"]

    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))


writer.write(json.dumps({"ready": time.monotonic() - started}).encode() + b"\n")
for line in reader:
    request = json.loads(line)
    began = time.monotonic()
    ok, payload = False, init_error
    if init_error is None:
        try:
            payload, ok = function(request["event"], Context(request)), True
        except Exception as exc:
            traceback.print_exc()
            payload = {"errorType": type(exc).__name__, "errorMessage": str(exc)[:4000]}
    seconds = time.monotonic() - began
    try:
        answer = json.dumps({"ok": ok, "payload": payload, "seconds": seconds})
    except (TypeError, ValueError) as exc:
        error = {"errorType": "Runtime.MarshalError", "errorMessage": f"Unable to marshal response: {exc}"}
        answer = json.dumps({"ok": False, "payload": error, "seconds": seconds})
    sys.stdout.flush()
    sys.stderr.flush()
    writer.write(answer.encode() + b"\n")
"""


@dataclass(frozen=True)
class FunctionConfig:
    """What the template says about one function, and what the sandbox needs to run it."""

    name: str
    arn: str
    handler: str
    timeout_s: float
    memory_mb: int
    environment: dict[str, str]  # the whole sandbox environment (lambda_environment)


@dataclass
class Result:
    ok: bool
    payload: Any
    seconds: float  # the handler's own duration (Lambda's Duration), not the cold start
    init_s: float | None  # the cold start, when this invocation started the sandbox
    pid: int


def lambda_environment(
    name: str,
    handler: str,
    memory_mb: int,
    region: str,
    asset: Asset,
    function_env: dict[str, str],
    aws: dict[str, str],
) -> dict[str, str]:
    """The variables the Lambda runtime sets, the function's own (template), and ``aws``: the endpoint
    and the credentials of the function's principal. Nothing from the rehearsal's own process."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TZ": ":UTC",
        "LAMBDA_TASK_ROOT": str(asset.path),
        "_HANDLER": handler,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
        "POWERTOOLS_TRACE_DISABLED": "1",  # no X-Ray daemon here
        **function_env,
        **aws,
    }


class Sandbox:
    """One warm interpreter process serving one function."""

    def __init__(self, config: FunctionConfig, asset: Asset, log_path: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        argv = [sys.executable, "-I", "-S", "-c", BOOTSTRAP, str(asset.path)]
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [*argv, str(to_child_r), str(from_child_w), config.handler],
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=config.environment,
                cwd=asset.path,
            )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self.config = config
        self.init_s: float | None = None

    def start(self) -> str | None:
        """Wait for the cold start; an error message if the process did not come up."""
        line = self._read_line(INIT_LIMIT_S)
        if line is None:
            return f"the sandbox did not start within {INIT_LIMIT_S:.0f} s"
        self.init_s = float(json.loads(line)["ready"])
        return None

    def _read_line(self, timeout_s: float) -> bytes | None:
        """One line from the process, or None at the deadline or when it exits (bounded)."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self._from_child], [], [], left)
            if not readable:
                return None
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def invoke(self, event: Any, request_id: str) -> tuple[str, Any, float]:
        """("ok" | "error" | "timeout" | "exited", payload, handler seconds)."""
        timeout = self.config.timeout_s
        request = {"event": event, "request_id": request_id, "arn": self.config.arn, "timeout_s": timeout}
        began = time.monotonic()
        data = memoryview(json.dumps(request).encode() + b"\n")
        try:
            while data:  # the sandbox is idle: it reads at once
                data = data[os.write(self._to_child, data) :]
        except OSError:
            return "exited", self.process.poll(), 0.0
        line = self._read_line(timeout)
        if line is None:
            code = self.process.poll()
            return ("exited" if code is not None else "timeout"), code, time.monotonic() - began
        answer = json.loads(line)
        return ("ok" if answer["ok"] else "error"), answer["payload"], float(answer["seconds"])

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


@dataclass
class _Slot:
    idle: list[Sandbox] = field(default_factory=list)
    running: int = 0


class LambdaPool:
    """Warm sandboxes per function; ``invoke`` runs one invocation in one of them."""

    def __init__(self, asset: Asset, log_path: Path, config_of: Callable[[str], FunctionConfig]) -> None:
        self.asset = asset
        self.log_path = log_path
        self._config_of = config_of
        self._slots: dict[str, _Slot] = {}
        self._all: list[Sandbox] = []
        self._cond = threading.Condition()
        self.started = 0  # sandboxes started (cold starts)

    def _acquire(self, name: str) -> tuple[Sandbox | None, bool]:
        deadline = time.monotonic() + INIT_LIMIT_S + 900  # the longest Lambda timeout, then give up
        with self._cond:
            slot = self._slots.setdefault(name, _Slot())
            while not slot.idle and slot.running >= MAX_PER_FUNCTION:
                if not self._cond.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise RuntimeError(f"{name}: {MAX_PER_FUNCTION} sandboxes busy for too long")
            slot.running += 1
            if slot.idle:
                return slot.idle.pop(), False
        return None, True

    def _release(self, name: str, sandbox: Sandbox | None) -> None:
        with self._cond:
            slot = self._slots[name]
            slot.running -= 1
            if sandbox is not None and sandbox.alive():
                slot.idle.append(sandbox)
            self._cond.notify()

    def invoke(self, name: str, event: Any) -> Result:
        config = self._config_of(name)
        request_id = str(uuid.uuid4())
        sandbox, cold = self._acquire(name)
        keep: Sandbox | None = None
        try:
            if sandbox is None:
                sandbox = Sandbox(config, self.asset, self.log_path)
                with self._cond:
                    self._all.append(sandbox)
                    self.started += 1
                failed = sandbox.start()
                if failed is not None:
                    sandbox.close()
                    error = {
                        "errorType": "Runtime.Unknown",
                        "errorMessage": f"RequestId: {request_id} {failed}",
                    }
                    return Result(False, error, 0.0, None, sandbox.process.pid)
            status, payload, seconds = sandbox.invoke(event, request_id)
            if status in ("ok", "error"):
                keep = sandbox
                return Result(
                    status == "ok", payload, seconds, sandbox.init_s if cold else None, sandbox.process.pid
                )
            sandbox.close()  # Lambda resets a sandbox whose invocation timed out or crashed
            if status == "timeout":
                message = (
                    f"RequestId: {request_id} Error: Task timed out after {config.timeout_s:.2f} seconds"
                )
                error = {"errorType": "Sandbox.Timedout", "errorMessage": message}
            else:
                message = f"RequestId: {request_id} Error: Runtime exited with error: exit status {payload}"
                error = {"errorType": "Runtime.ExitError", "errorMessage": message}
            return Result(False, error, seconds, sandbox.init_s if cold else None, sandbox.process.pid)
        finally:
            self._release(name, keep)

    def close(self) -> None:
        with self._cond:
            sandboxes, self._all = self._all, []
            self._slots.clear()
        for sandbox in sandboxes:
            sandbox.close()
