"""Routes of the Benchwright API (powertools APIGatewayRestResolver, validation on) and the Lambda
entry point ``handle``. The framework lives here, in functions/; the core (benchwright.api: request
and response models, the Step Functions / S3 backend) does not import powertools.
``python -m functions.api_routes docs/openapi.json`` writes the OpenAPI document.

Documented outcomes, never a 500 for anything the caller sends:
400 malformed JSON or an invalid spec (``field`` names the culprit), 401 an event without an IAM
identity, 404 unknown route or run id, 413 a body over 256 KiB, 422 a body or parameter that does
not fit the schema, 429 a submission over the caller's daily quota (``api.max_runs_per_day``,
benchwright.api.quota), 400 ``cost_over_limit`` / ``cost_unknown`` a submission over the stage's
estimated cost per request (``api.max_usd_per_request``, benchwright.api.cost) or one it cannot price, 409 cancelling a run that already finished is reported as ALREADY_FINISHED (200).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from benchwright import __version__
from benchwright.api.backend import CloudBackend, RunNotFound, api_status
from benchwright.api.cost import CostCap, CostRefused, check_cost
from benchwright.api.limits import DEFAULT_INSTANCE_TYPES, ApiLimits, check_limits
from benchwright.api.models import (
    MAX_BODY_BYTES,
    RUN_ID_PATTERN,
    CancelResponse,
    ErrorBody,
    RecordLink,
    ReportLink,
    RunDetail,
    RunList,
    RunSummary,
    StartedRun,
    SubmitRequest,
    SubmitResponse,
)
from benchwright.api.quota import QuotaExceeded, reserve
from benchwright.errors import SpecError
from benchwright.providers.aws.config import ApiSettings
from benchwright.runs import new_run_id

Status = Literal["RUNNING", "SUCCEEDED", "INVALID", "FAILED", "TIMED_OUT", "ABORTED"]
ERRORS: dict[int, OpenAPIResponse] = {
    400: {"description": "malformed JSON or invalid spec"},
    401: {"description": "no IAM identity on the request (SigV4 required)"},
    403: {"description": "the run was submitted by another identity (admins see all)"},
    404: {"description": "unknown run id"},
    413: {"description": "body larger than 256 KiB"},
    422: {"description": "body or parameters do not fit the schema"},
}  # fmt: skip

resolver = APIGatewayRestResolver(enable_validation=True)
_backend: CloudBackend | None = None


def backend() -> CloudBackend:
    """The backend for this container (built from the environment on first use)."""
    global _backend
    if _backend is None:
        _backend = CloudBackend.from_env()
    return _backend


def set_backend(value: CloudBackend | None) -> None:
    """Tests point the routes at a backend wired to moto."""
    global _backend
    _backend = value


ErrorHandler = TypeVar("ErrorHandler", bound=Callable[..., Response[str]])


def on_error(exc_class: type[Exception]) -> Callable[[ErrorHandler], ErrorHandler]:
    """``resolver.exception_handler``, typed: powertools leaves the decorator it returns unannotated,
    which would make each handler an untyped function to the type checker."""

    def register(handler: ErrorHandler) -> ErrorHandler:
        resolver.exception_handler(exc_class)(handler)
        return handler

    return register


def error(status: int, code: str, message: str, field: str | None = None) -> Response[str]:
    body = ErrorBody(error=code, message=message, field=field).model_dump_json(exclude_none=True)
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


@on_error(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response[str]:
    first = exc.errors()[0] if exc.errors() else {}
    loc = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path"))
    message = str(first.get("msg", "invalid request")).removeprefix("Value error, ")
    if first.get("type") == "json_invalid":
        return error(400, "malformed_json", "the body is not valid JSON")
    return error(422, "invalid_request", message, loc or None)


@on_error(SpecError)
def _bad_spec(exc: SpecError) -> Response[str]:
    return error(400, "invalid_spec", exc.detail, exc.field or None)


class Forbidden(Exception):
    """The caller is neither the run's submitter nor an admin."""


@on_error(Forbidden)
def _forbidden(exc: Forbidden) -> Response[str]:
    return error(403, "forbidden", f"run {exc.args[0]!r} was submitted by another identity")


@on_error(CostRefused)
def _over_cost(exc: CostRefused) -> Response[str]:
    return error(400, exc.code, str(exc), exc.field)


@on_error(QuotaExceeded)
def _over_quota(exc: QuotaExceeded) -> Response[str]:
    return error(429, "quota_exceeded", str(exc), "api.max_runs_per_day")


MAX_RUNS_PER_REQUEST = 20  # a suite POST starts one execution per benchmark: bounded
MAX_JSON_DEPTH = 64


def caller() -> str:
    """The SigV4 identity of the current request (checked present by ``_precheck``)."""
    context = resolver.current_event.raw_event.get("requestContext") or {}
    identity = context.get("identity") or {}
    return str(identity.get("userArn") or identity.get("caller") or "")


def is_admin(principal: str) -> bool:
    admins = ApiSettings.from_env().api_admins  # the stage's api_admins (infra/config.py)
    role = principal.split(":assumed-role/", 1)[1].split("/", 1)[0] if ":assumed-role/" in principal else None
    return any(principal == a or (role is not None and role == a) for a in admins)


def authorize(run_id: str, cancel: bool = False) -> None:
    """A submitted run is its submitter's (and the admins'). A run nobody submitted through the API
    (the nightly schedule) is the team's: any caller may read it, only an admin may cancel it."""
    who = caller()
    if is_admin(who):
        return
    owner = backend().owner(run_id)
    if owner == who or (owner is None and not cancel):
        return
    raise Forbidden(run_id)


@on_error(RunNotFound)
def _not_found(exc: RunNotFound) -> Response[str]:
    return error(404, "run_not_found", f"no run with id {exc.args[0]!r}")


@resolver.not_found
def _no_route(exc: Exception) -> Response[str]:
    return error(
        404, "not_found", f"no route {resolver.current_event.http_method} {resolver.current_event.path}"
    )


def _with_tags(spec: Any, tags: dict[str, str]) -> Any:
    """The request's tags merged in BEFORE validation, so they pass the spec's own tag rules."""
    if not tags or not isinstance(spec, dict):
        return spec
    own = spec.get("tags")
    return {**spec, "tags": {**(own if isinstance(own, dict) else {}), **tags}}


def _validate(request: SubmitRequest) -> list[dict[str, Any]]:
    """The benchmarks to start, each normalised, after the spec models have accepted them."""
    from benchwright.forecast.advice import check_credits
    from benchwright.spec import parse_spec, parse_suite

    if request.suite is not None:
        data = dict(request.suite)
        benchmarks = data.get("benchmarks")
        if isinstance(benchmarks, list):
            if len(benchmarks) > MAX_RUNS_PER_REQUEST:
                raise SpecError(
                    "suite.benchmarks",
                    f"{len(benchmarks)} benchmarks would start {len(benchmarks)} runs; one request starts "
                    f"at most {MAX_RUNS_PER_REQUEST}",
                )
            # the runs of a suite of several benchmarks carry its name, as local runs do, so the
            # bucket's suites/<name>/ index (and `benchwright pull --spec SUITE`) finds them all; the
            # size tells the last one to finish that the night is complete (stages/finish_digest.py)
            extra = (
                {"suite": str(data["suite"]), "suite_size": str(len(benchmarks))}
                if len(benchmarks) > 1 and data.get("suite")
                else {}
            )
            data["benchmarks"] = [_with_tags(b, {**extra, **request.tags}) for b in benchmarks]
        suite = parse_suite(data)
        limits = _limits()
        for i, bench in enumerate(suite.benchmarks):
            _cloud_only(bench.target.provider, bench.runner.platform, f"benchmarks[{i}].")
            check_limits(bench, limits, f"benchmarks[{i}].")
            check_credits(bench, f"benchmarks[{i}].")  # validity.credits: refuse, a drain predicted
        check_cost(suite.benchmarks, _cost_cap(), lambda i: f"benchmarks[{i}] ")
        return [b.model_dump(mode="json") for b in suite.benchmarks]
    spec = parse_spec(_with_tags(request.spec, request.tags))
    _cloud_only(spec.target.provider, spec.runner.platform, "")
    check_limits(spec, _limits())
    check_credits(spec)
    check_cost([spec], _cost_cap())
    return [spec.model_dump(mode="json")]


def _cost_cap() -> CostCap:
    """The stage's estimated-cost cap per request (infra/config.py ``api.max_usd_per_request``)."""
    settings = ApiSettings.from_env()
    return CostCap(settings.api_max_usd_per_request, settings.api_allow_unpriced)


def _limits() -> ApiLimits:
    """The stage's limits on a submission (infra/config.py ``api``, set in the Lambda's environment)."""
    settings = ApiSettings.from_env()
    return ApiLimits(
        endpoint_cidrs=tuple(settings.api_endpoint_cidrs),
        instance_types=tuple(settings.api_instance_types) or DEFAULT_INSTANCE_TYPES,
        max_run_hours=settings.max_run_hours,
    )


def _cloud_only(provider: str, platform: str, prefix: str) -> None:
    """A deployed service cannot start a throwaway server on the caller's machine."""
    if provider == "local":
        raise SpecError(
            f"{prefix}target.provider", "a local target runs only with `benchwright run`; use a cloud target"
        )
    if platform == "local":
        raise SpecError(f"{prefix}runner.platform", "the cloud runs runners on fargate or ec2")


@resolver.post(
    "/runs",
    summary="Submit a benchmark spec or a suite (one run per benchmark)",
    responses={
        201: OpenAPIResponse(description="started"),
        **ERRORS,
        400: {
            "description": "malformed JSON, an invalid spec, or a request over the stage's estimated cost "
            "per request (api.max_usd_per_request) or one it cannot price"
        },
        429: {"description": "the caller's runs today would exceed the stage's api.max_runs_per_day"},
    },
)
def submit(request: Annotated[SubmitRequest, Body()]) -> Response[str]:
    started: list[StartedRun] = []
    owner = caller()
    specs = _validate(request)
    run_ids = [new_run_id() for _ in specs]
    cloud = backend()  # the quota's count lives in the results bucket, beside the runs' owners
    reserve(cloud.client("s3"), cloud.bucket, owner, run_ids, ApiSettings.from_env().api_max_runs_per_day)
    for spec, run_id in zip(specs, run_ids, strict=True):
        backend().set_owner(run_id, owner)
        payload: dict[str, Any]
        if spec.get("matrix") or int(spec.get("repeats", 1)) > 1:
            kind, payload = "suite", {"run_id": run_id, "spec": spec, "trigger": "api"}
        else:
            # the Wait states read poll_seconds: sized to the cell so a run stays under ~60 transitions
            payload = {"run_id": run_id, "spec_name": spec["name"], "spec": spec, "poll_seconds": _poll(spec)}
            kind = "benchmark"
        arn = backend().start(kind, run_id, payload)
        started.append(StartedRun(run_id=run_id, spec_name=spec["name"], kind=kind, execution_arn=arn))  # type: ignore[arg-type]
    body = SubmitResponse(runs=started)
    return Response(status_code=201, content_type=content_types.APPLICATION_JSON, body=body.model_dump_json())


def _poll(spec: dict[str, Any]) -> int:
    from benchwright.spec import parse_spec
    from benchwright.stages.suite import poll_seconds_for

    return poll_seconds_for(parse_spec(spec))


def _cells(record: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Headline figures of each cell's measured phase, and every validity flag, from a run record."""
    from pydantic import ValidationError

    from benchwright.judge.validity import phase_flags
    from benchwright.runs import RunRecord

    try:
        run = RunRecord.model_validate(record) if record else None
    except ValidationError:
        run = None  # a record of another schema version: status still answers, figures do not
    if run is None or not run.cells:
        return None, []
    summary: dict[str, Any] = {}
    validity: list[dict[str, Any]] = []
    for cell in run.cells:
        doc = cell.measured
        key = f"{cell.cell_id}#{cell.repeat}" if cell.repeat else cell.cell_id
        summary[key] = {
            "parameters": cell.parameters,
            "throughput": doc.throughput if doc else None,
            "operations": doc.operations_total if doc else None,
            "p99_us": {op: s.p99_us for op, s in doc.operations.items()} if doc else {},
            "valid": doc.valid if doc else False,
        }
        # every flag once, with the phase that raised it (a load's and a run's error_rate are two)
        validity += [dict(f.model_dump(), cell=cell.cell_id, phase=phase) for phase, f in phase_flags(cell)]
    return summary, validity


def _summary(kind: str, execution: dict[str, Any]) -> RunSummary:
    return RunSummary(
        run_id=execution["name"] if "name" in execution else execution["executionArn"].rsplit(":", 1)[-1],
        kind=kind,  # type: ignore[arg-type]
        status=api_status(execution),
        started_at=execution.get("startDate"),
        stopped_at=execution.get("stopDate"),
    )


@resolver.get("/runs", summary="List recent runs (newest first)", responses=ERRORS)
def list_runs(
    status: Annotated[Status | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> RunList:
    who = caller()
    runs = backend().list_runs(status, limit)
    if not is_admin(who):  # a caller lists the runs it submitted
        runs = [(kind, e) for kind, e in runs if backend().owner(_summary(kind, e).run_id) in (who, None)]
    return RunList(runs=[_summary(kind, e) for kind, e in runs])


@resolver.get("/runs/<run_id>", summary="Status, summary, validity and cost of a run", responses=ERRORS)
def get_run(run_id: Annotated[str, Path(pattern=RUN_ID_PATTERN)]) -> RunDetail:
    kind, execution = backend().describe(run_id)
    authorize(run_id)
    base = _summary(kind, execution).model_dump()
    record = backend().record(run_id) or {}
    if base["status"] != "RUNNING" and record.get("status") == "invalid":
        base["status"] = "INVALID"  # the record says so even where the execution's error does not
    summary, validity = _cells(record)
    return RunDetail(
        **base,
        spec_name=record.get("spec_name"),
        summary=summary,
        validity=validity,
        cost=record.get("cost"),
        verdict=record.get("verdict"),
        error=record.get("error") or execution.get("error"),
        warnings=[w for w in record.get("warnings") or [] if isinstance(w, dict)],
    )


@resolver.get("/runs/<run_id>/report", summary="A presigned link to the HTML report", responses=ERRORS)
def get_report(
    run_id: Annotated[str, Path(pattern=RUN_ID_PATTERN)],
    expires_in: Annotated[int, Query(ge=60, le=43200)] = 3600,
) -> ReportLink:
    backend().describe(run_id)
    authorize(run_id)
    url = backend().report_url(run_id, expires_in)
    if url is None:
        raise RunNotFound(f"{run_id} (no report yet)")
    return ReportLink(run_id=run_id, url=url, expires_in=expires_in)


@resolver.get(
    "/runs/<run_id>/record",
    summary="A presigned link to the whole run record (what `benchwright pull` stores)",
    responses=ERRORS,
)
def get_record(
    run_id: Annotated[str, Path(pattern=RUN_ID_PATTERN)],
    expires_in: Annotated[int, Query(ge=60, le=43200)] = 3600,
) -> RecordLink:
    backend().describe(run_id)
    authorize(run_id)
    url = backend().record_url(run_id, expires_in)
    if url is None:
        raise RunNotFound(f"{run_id} (no record yet)")
    return RecordLink(run_id=run_id, url=url, expires_in=expires_in)


@resolver.post("/runs/<run_id>/cancel", summary="Stop a run and tear down what it created", responses=ERRORS)
def cancel(run_id: Annotated[str, Path(pattern=RUN_ID_PATTERN)]) -> CancelResponse:
    _, execution = backend().describe(run_id)
    authorize(run_id, cancel=True)
    if execution["status"] != "RUNNING":
        return CancelResponse(run_id=run_id, status="ALREADY_FINISHED", teardown_started=False)
    backend().stop(execution["executionArn"], "cancelled through the API")
    started = backend().start_teardown(execution["executionArn"], run_id)
    return CancelResponse(run_id=run_id, status="ABORTED", teardown_started=started)


def _precheck(event: dict[str, Any]) -> Response[str] | None:
    """Refuse what must never reach a route: no IAM identity, oversize or undecodable bodies."""
    context = event.get("requestContext")
    identity = context.get("identity") if isinstance(context, dict) else None
    if not isinstance(identity, dict) or not (identity.get("userArn") or identity.get("caller")):
        return error(401, "unauthenticated", "the request carries no IAM identity; sign it with SigV4")
    body = event.get("body")
    if body is None:
        return None
    if not isinstance(body, str):
        return error(400, "malformed_json", "the body must be a JSON string")
    raw = body.encode("utf-8", "surrogatepass")
    if event.get("isBase64Encoded"):
        try:
            raw = base64.b64decode(body, validate=True)
        except ValueError:
            return error(400, "malformed_json", "the body is not valid base64")
    if len(raw) > MAX_BODY_BYTES:
        return error(413, "body_too_large", f"the body has {len(raw)} bytes; the limit is {MAX_BODY_BYTES}")
    if raw.strip():
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return error(400, "malformed_json", "the body is not valid JSON")
        except RecursionError:
            return error(400, "too_deep", f"the body is nested more than {MAX_JSON_DEPTH} levels deep")
        if _depth(data) > MAX_JSON_DEPTH:
            return error(400, "too_deep", f"the body is nested more than {MAX_JSON_DEPTH} levels deep")
    return None


def _depth(data: Any) -> int:
    """Nesting depth, iteratively (the validators below recurse: a deep body must stop here)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            return depth
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _as_event(response: Response[str]) -> dict[str, Any]:
    return {
        "statusCode": response.status_code,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "multiValueHeaders": {},
        "body": response.body,
        "isBase64Encoded": False,
    }


def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry: pre-checks, then the resolver."""
    if not isinstance(event, dict):
        return _as_event(error(400, "bad_event", "not an API Gateway proxy event"))
    refused = _precheck(event)
    if refused is not None:
        return _as_event(refused)
    return resolver.resolve(event, context)


def openapi_json() -> str:
    """The OpenAPI document (docs/openapi.json is this, checked by a test)."""
    return resolver.get_openapi_json_schema(
        title="Benchwright API",
        version=__version__,
        summary="Submit database benchmarks and read their results (IAM / SigV4 authorization).",
    )


def main(argv: list[str] | None = None) -> int:
    """Write the OpenAPI document to the path given (stdout without one)."""
    import sys
    from pathlib import Path as FilePath

    args = sys.argv[1:] if argv is None else argv
    text = openapi_json() + "\n"
    if args:
        FilePath(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
