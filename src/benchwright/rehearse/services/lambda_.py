"""Lambda and Step Functions inside the moto server.

- Lambda Invoke runs the real handler of ``functions/`` named by the template, in a sandbox process
  that imports only the function's built asset (rehearse/lambda_pool.py); an exception comes back
  as a function error (``X-Amz-Function-Error: Unhandled`` and ``{"errorType", "errorMessage"}``) so
  the ASL's Catch sees it, and a throttled call is the Invoke API's 429 ``TooManyRequestsException``.
- Step Functions names a Lambda service error ``Lambda.<code>`` as AWS does (moto names it "Exception").
- A Wait state lasts at most ``hooks.wait_cap_s`` (time compression, said in execution.json).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


def install(hooks: Hooks) -> None:
    _patch_invoke(hooks)
    _patch_sfn_errors(hooks)
    _patch_wait(hooks)


def _patch_invoke(hooks: Hooks) -> None:
    from moto.awslambda.exceptions import LambdaClientError
    from moto.awslambda_simple.models import LambdaSimpleBackend

    class TooManyRequests(LambdaClientError):
        code = 429

        def __init__(self) -> None:
            super().__init__("TooManyRequestsException", "Rate exceeded (rehearsal throttle)")

    class ServiceError(LambdaClientError):
        code = 500

        def __init__(self) -> None:
            super().__init__("ServiceException", "Internal error (rehearsal: after the function ran)")

    def invoke(
        backend: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
    ) -> bytes:
        name = function_name.rsplit(":", 1)[-1]
        fn = hooks.account.functions.get(name)
        if fn is None:
            raise LambdaClientError("ResourceNotFoundException", f"Function not found: {function_name}")
        with hooks.lock:
            left = hooks.faults.throttle.get(fn.state, 0)
            if left > 0:
                hooks.faults.throttle[fn.state] = left - 1
                hooks.events.append(f"throttled {fn.state}")
        if left > 0:
            raise TooManyRequests()
        ok, payload = run_handler(hooks, fn.state, fn.name, json.loads(body or "{}"))
        if fn.state in hooks.faults.service_error_after:
            hooks.faults.service_error_after.discard(fn.state)
            hooks.events.append(f"{fn.state} ran, then Invoke answered 500 ServiceException")
            raise ServiceError()
        if not ok:
            response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(payload).encode()

    hooks.patch(LambdaSimpleBackend, "invoke", invoke)


def run_handler(hooks: Hooks, state: str, name: str, event: Any) -> tuple[bool, Any]:
    """One invocation of function ``name`` in one of its sandboxes (lambda_pool.py): its own
    interpreter, its asset alone on the import path, its timeout enforced."""
    result = hooks.pool.invoke(name, event)
    hooks.record_invocation(state, name, result)
    if hooks.on_state_done is not None:
        hooks.on_state_done(state)
    return result.ok, result.payload


def _patch_sfn_errors(hooks: Hooks) -> None:
    from botocore.exceptions import ClientError
    from moto.stepfunctions.parser.api import HistoryEventType, LambdaFunctionFailedEventDetails
    from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import (
        CustomErrorName,
    )
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task_lambda import (
        StateTaskLambda,
    )

    original = StateTaskLambda.__dict__["_from_error"]

    def from_error(task: Any, env: Any, ex: Exception) -> Any:
        if isinstance(ex, ClientError):  # AWS: "Lambda.TooManyRequestsException", ...
            error = f"Lambda.{ex.response['Error']['Code']}"
            cause = ex.response["Error"].get("Message", "")
            details: Any = {
                "lambdaFunctionFailedEventDetails": LambdaFunctionFailedEventDetails(error=error, cause=cause)
            }
            return FailureEvent(
                env=env,
                error_name=CustomErrorName(error),
                event_type=HistoryEventType.LambdaFunctionFailed,
                event_details=details,
            )
        return original(task, env, ex)

    hooks.patch(StateTaskLambda, "_from_error", from_error)


def _patch_wait(hooks: Hooks) -> None:
    """Time compression: stand-ins are ready in seconds and the poll interval is sized for AWS
    (minutes), so a Wait lasts at most ``wait_cap_s``. The transitions counted are the ones of this
    cadence; execution.json says so."""
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
        WaitFunction,
    )

    cap = hooks.wait_cap_s
    if cap is None:
        return

    def eval_body(wait: Any, env: Any) -> None:
        seconds = wait._get_wait_seconds(env=env)
        wait._wait_interval(env=env, wait_seconds=min(int(seconds), int(cap)))

    hooks.patch(WaitFunction, "_eval_body", eval_body)
