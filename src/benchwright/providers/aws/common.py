"""Shared AWS plumbing: lazy clients, the three lifecycle tags, and ClientError -> our error names.

Error translation is what lets the state machine route: throttling and capacity become
``Retryable*`` (the ASL retries them with backoff); everything else keeps a non-retryable name.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from benchwright.errors import BenchwrightError, ProvisioningFailed, RetryableProvisioningError
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.names import (
    EXPIRES_TAG,
    OWNER_TAG,
    RESOURCE_PREFIX,
    RUN_ID_TAG,
    STAGE_TAG,
    SUITE_TIMEOUT_RUNS,
)

THROTTLING = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "RequestThrottled",
    "SlowDown",
    "InsufficientDBInstanceCapacity",
    "InsufficientCacheClusterCapacity",
    "InsufficientInstanceCapacity",
    "ServiceUnavailable",
    "InternalError",
    "InternalFailure",
}
# An interface still attached to its (terminating) instance: delete or reuse it on a later poll.
ENI_IN_USE = frozenset({"InvalidNetworkInterface.InUse", "InvalidNetworkInterfaceID.InUse"})
NOT_FOUND_SUFFIXES = ("NotFound", "NotFoundFault", "NotFoundException", ".NotFound", "NoSuchKey")

T = TypeVar("T")


_SESSION: Any = None
_LOCK = threading.Lock()


def shared_session() -> Any:
    """One botocore session per process: service models load once (they are most of a client's cost)."""
    global _SESSION
    with _LOCK:
        if _SESSION is None:
            import boto3

            _SESSION = boto3.session.Session()
        return _SESSION


class Clients:
    """boto3 clients created on first use (never at import), one per service, shared by providers."""

    def __init__(self, settings: AwsSettings, session: Any = None) -> None:
        self.settings = settings
        self._session = session
        self._clients: dict[str, Any] = {}

    def __call__(self, service: str) -> Any:
        with _LOCK:
            client = self._clients.get(service)
        if client is None:
            from botocore.config import Config

            session = self._session or shared_session()
            region = "us-east-1" if service == "pricing" else self.settings.region
            # S3 signs with SigV4 so presigned report links work in every region
            signing = {"signature_version": "s3v4"} if service == "s3" else {}
            cfg = Config(retries={"mode": "standard", "max_attempts": 3}, **signing)
            with _LOCK:
                client = self._clients.get(service)
                if client is None:
                    client = session.client(service, region_name=region, config=cfg)
                    self._clients[service] = client
        return client


def target_ttl_hours(settings: AwsSettings, cells: int) -> float:
    """How long a target shared by ``cells`` suite cells may live: one run's ttl, plus max_run_hours
    for each further cell up to what the suite execution's timeout allows (after that the execution
    is over and the janitor may take it)."""
    further = max(0, min(cells, SUITE_TIMEOUT_RUNS) - 1)
    return settings.ttl_hours + further * settings.max_run_hours


def lifecycle_tags(settings: AwsSettings, run_id: str, now: datetime | None = None) -> dict[str, str]:
    """run id / owner / stage / expires-at: what teardown, the janitor, the leak test and the
    stage's cost budget look for."""
    now = now or datetime.now(UTC)
    expires = now + timedelta(hours=settings.ttl_hours)
    return {
        RUN_ID_TAG: run_id,
        OWNER_TAG: settings.owner,
        STAGE_TAG: settings.stage,
        EXPIRES_TAG: expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def tag_list(tags: dict[str, str]) -> list[dict[str, str]]:
    """The ``[{"Key": k, "Value": v}]`` form RDS, ElastiCache, EC2, S3 and Secrets Manager use."""
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def error_code(exc: BaseException | None) -> str:
    """The AWS error code of a botocore error, or of the one ours wraps (``raise ... from exc``);
    errors are told apart by this code, never by their message."""
    while exc is not None:
        response = getattr(exc, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        if code:
            return code
        exc = exc.__cause__
    return ""


def already_exists(exc: BaseException) -> bool:
    """A create that found its resource already there (DBInstanceAlreadyExists,
    ClusterAlreadyExistsFault...): a retried stage finding its own resource."""
    code = error_code(exc)
    return "AlreadyExists" in code and not isinstance(exc, RetryableProvisioningError)


def in_state(exc: BaseException, *prefixes: str) -> bool:
    """A call refused for its resource's current state (InvalidDBSnapshotState,
    InvalidDBClusterSnapshotStateFault...): try again later."""
    code = error_code(exc)
    return code.startswith(prefixes) and "State" in code


def is_not_found(exc: Exception) -> bool:
    code = error_code(exc)
    return bool(code) and (code.endswith(NOT_FOUND_SUFFIXES) or code in {"404", "NoSuchEntity"})


def translate(
    exc: Exception,
    what: str,
    retryable: type[BenchwrightError] = RetryableProvisioningError,
    fatal: type[BenchwrightError] = ProvisioningFailed,
) -> BenchwrightError:
    """A botocore error as one of ours, naming ``what`` (e.g. "rds instance bw-123")."""
    code = error_code(exc) or type(exc).__name__
    message = str(exc)
    if code in THROTTLING:
        return retryable(f"{what}: {code} (transient): {message}")
    return fatal(f"{what}: {code}: {message}")


def aws_call(
    what: str,
    fn: Callable[..., T],
    *args: Any,
    retryable: type[BenchwrightError] = RetryableProvisioningError,
    fatal: type[BenchwrightError] = ProvisioningFailed,
    **kwargs: Any,
) -> T:
    """Call ``fn`` and turn a ClientError into our taxonomy (our own errors pass through)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return fn(*args, **kwargs)
    except ClientError as exc:
        raise translate(exc, what, retryable, fatal) from exc
    except BotoCoreError as exc:  # endpoint unreachable, read timeout: transient
        raise retryable(f"{what}: {exc}") from exc


def paginate(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[Any]:
    """Every item under ``key`` across the pages of ``operation``."""
    for page in client.get_paginator(operation).paginate(**kwargs):
        yield from page.get(key, [])


def resource_name(run_id: str, suffix: str = "", limit: int = 40) -> str:
    """A deterministic, name-safe resource id for a run: re-running a stage finds the same resource.

    Letters, digits and hyphens, starting with a letter (the strictest rule: RDS / ElastiCache).
    """
    slug = "".join(ch if ch.isalnum() else "-" for ch in run_id.lower()).strip("-")
    digest = hashlib.sha1(run_id.encode()).hexdigest()[:6]
    tail = f"-{digest}{('-' + suffix) if suffix else ''}"
    head = (RESOURCE_PREFIX + slug)[: max(4, limit - len(tail))].rstrip("-")
    return head + tail
