"""Performance Insights for stand-ins: GetResourceMetrics answered in AWS's shape from wait-event
samples of the stand-in server (rehearse/server_series.py takes them once a second, as PI samples
active sessions once a second).

moto 5.2.5 has no Performance Insights backend, so ``install()`` puts a small dispatcher in front of
moto server's WSGI application (idempotent, once per process, like cache_api.install): requests for
the service (botocore speaks Smithy RPC v2 CBOR to it: ``/service/PerformanceInsightsv20180227/
operation/...``; JSON 1.1 with ``X-Amz-Target`` is answered too) are decoded and encoded with
botocore's own CBOR serializer/parser against the service model, every other request goes to moto.
A call signed by a stack principal is evaluated against its role by moto's IAM evaluation, as every
other call in the rehearsal is (services/iam.py), so a stage without ``pi:GetResourceMetrics`` is
denied here as it would be on AWS.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

TARGET = "PerformanceInsightsv20180227"
PATH = f"/service/{TARGET}/operation/"
METRIC = "db.load.avg"
GROUP = "db.wait_event"
PERIODS = (1, 60, 300, 3600, 86400)  # GetResourceMetrics' PeriodInSeconds values

_lock = threading.Lock()
_samples: dict[str, dict[int, dict[tuple[str, str], int]]] = {}  # resource id -> second -> (type, name) -> n
_installed: list[bool] = []
_principal_check: list[Callable[[dict[str, Any], bytes], None]] = []


class PiError(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.status = code, status


def record(resource_id: str, second: int, sessions: dict[tuple[str, str], int]) -> None:
    """One sample: active sessions by (wait event type, wait event name) at an epoch second."""
    with _lock:
        _samples.setdefault(resource_id, {})[second] = dict(sessions)


def forget(resource_id: str) -> None:
    with _lock:
        _samples.pop(resource_id, None)


def _epoch(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float):
        return float(value)
    raise PiError("InvalidArgumentException", f"not a timestamp: {value!r}")


def _load(
    seconds: dict[int, dict[tuple[str, str], int]], lo: int, hi: int, key: tuple[str, str] | None
) -> float | None:
    """Average active sessions over [lo, hi) from the samples in it (None: no sample in the period)."""
    found = [s for t, s in seconds.items() if lo <= t < hi]
    if not found:
        return None
    total = [sum(s.values()) if key is None else s.get(key, 0) for s in found]
    return sum(total) / len(found)


def _keys(
    group: dict[str, Any], seconds: dict[int, dict[tuple[str, str], int]], start: int, end: int
) -> list[tuple[str, str] | None]:
    """The series of one query: the total (no GroupBy) or the top ``Limit`` wait events by load."""
    if not group:
        return [None]
    if group.get("Group") != GROUP:
        raise PiError("InvalidArgumentException", f"the stand-in groups by {GROUP} only")
    totals: dict[tuple[str, str], int] = {}
    for t, s in seconds.items():
        if start <= t < end:
            for k, n in s.items():
                totals[k] = totals.get(k, 0) + n
    ranked = [k for k, _ in sorted(totals.items(), key=lambda kv: -kv[1])]
    return list(ranked[: int(group.get("Limit") or 10)])


def get_resource_metrics(params: dict[str, Any]) -> dict[str, Any]:
    """The GetResourceMetrics response for ``params`` (db.load.avg, optionally by db.wait_event)."""
    if params.get("ServiceType") != "RDS":
        raise PiError("InvalidArgumentException", "ServiceType must be RDS for an RDS stand-in")
    ident = str(params.get("Identifier", ""))
    with _lock:
        seconds = dict(_samples.get(ident, {}))
    if not seconds and ident not in _samples:
        raise PiError("InvalidArgumentException", f"No Performance Insights data for resource {ident}")
    period = int(params.get("PeriodInSeconds") or 1)
    if period not in PERIODS:
        raise PiError("InvalidArgumentException", f"PeriodInSeconds must be one of {PERIODS}")
    start = math.floor(_epoch(params["StartTime"]) / period) * period
    end = math.ceil(_epoch(params["EndTime"]) / period) * period
    metrics: list[dict[str, Any]] = []
    for query in params.get("MetricQueries", []):
        if query.get("Metric") != METRIC:
            raise PiError(
                "InvalidArgumentException", f"the stand-in serves {METRIC} only, not {query.get('Metric')}"
            )
        keys = _keys(query.get("GroupBy") or {}, seconds, start, end)
        for key in keys:
            points = []
            for lo in range(start, end, period):
                value = _load(seconds, lo, lo + period, key)
                if value is not None:
                    points.append({"Timestamp": datetime.fromtimestamp(lo, UTC), "Value": value})
            entry: dict[str, Any] = {"Key": {"Metric": METRIC}, "DataPoints": points}
            if key is not None:
                entry["Key"]["Dimensions"] = {f"{GROUP}.type": key[0], f"{GROUP}.name": key[1]}
            metrics.append(entry)
    offset = int(params.get("NextToken") or 0)
    size = int(params.get("MaxResults") or 25)
    page = metrics[offset : offset + size]
    out: dict[str, Any] = {
        "AlignedStartTime": datetime.fromtimestamp(start, UTC),
        "AlignedEndTime": datetime.fromtimestamp(end, UTC),
        "Identifier": ident,
        "MetricList": page,
    }
    if offset + size < len(metrics):
        out["NextToken"] = str(offset + size)
    return out


def _operation(environ: dict[str, Any]) -> str | None:
    path = str(environ.get("PATH_INFO", ""))
    if path.startswith(PATH):
        return path[len(PATH) :]
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    return target.split(".", 1)[1] if target.startswith(TARGET + ".") else None


def _codec() -> tuple[Any, Any, Any]:
    import botocore.session
    from botocore.parsers import RpcV2CBORParser
    from botocore.serialize import RpcV2CBORSerializer

    model = botocore.session.get_session().get_service_model("pi")
    return model, RpcV2CBORParser(), RpcV2CBORSerializer()


def _json_ready(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    return value


def answer(environ: dict[str, Any], operation: str) -> tuple[str, list[tuple[str, str]], bytes]:
    """(status, headers, body) of one Performance Insights request."""
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(size) if size else b""
    cbor = str(environ.get("PATH_INFO", "")).startswith(PATH)
    model, parser, serializer = _codec()
    try:
        if _principal_check:
            _principal_check[0](environ, body)
        if operation != "GetResourceMetrics":
            raise PiError(
                "InvalidArgumentException", f"the stand-in answers GetResourceMetrics only, not {operation}"
            )
        params = (parser._initial_body_parse(body) if cbor else json.loads(body or b"{}")) or {}
        result, status = get_resource_metrics(params), "200 OK"
    except PiError as exc:
        result, status = {"__type": exc.code, "message": str(exc)}, f"{exc.status} Error"
    if cbor:
        out = bytearray()
        shape = model.operation_model("GetResourceMetrics").output_shape
        if status.startswith("200"):
            serializer._serialize_data_item(out, result, shape)
        else:
            serializer._serialize_type_map(out, result, None)
        headers = [("Content-Type", "application/cbor"), ("smithy-protocol", "rpc-v2-cbor")]
        return status, headers, bytes(out)
    return status, [("Content-Type", "application/x-amz-json-1.1")], json.dumps(_json_ready(result)).encode()


def install(check: Callable[[dict[str, Any], bytes], None] | None = None) -> None:
    """Put the dispatcher in front of moto server's application (once per process); ``check``
    (the rehearsal's principal evaluation) replaces the previous one."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    with _lock:
        _principal_check[:] = [check] if check is not None else []
        if _installed:
            return
        _installed.append(True)
    original = DomainDispatcherApplication.__call__

    def dispatch(self: Any, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        operation = _operation(environ)
        if operation is None:
            result: Iterable[bytes] = original(self, environ, start_response)
            return result
        status, headers, body = answer(environ, operation)
        start_response(status, [*headers, ("Content-Length", str(len(body)))])
        return [body]

    DomainDispatcherApplication.__call__ = dispatch  # type: ignore[method-assign]
