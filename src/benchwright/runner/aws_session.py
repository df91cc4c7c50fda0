"""The runner's run-scoped AWS session (issue 30 item 5): AssumeRole tagged with the run it serves.

The runner reads its run's database secret and plan and writes its output as a session of the
run-scoped role (infra/isolation.py) tagged ``benchwright:run-id``, so another run's secret or prefix
is denied whatever it is handed. It lives beside the runner, which imports nothing from the
providers: Teardown's use of the same session is in providers/aws/run_session.py.

A session of a role assumed from another role's session (ECS task credentials, an instance profile,
a Lambda's role) is role chaining, which AWS caps at one hour; a runner measures for longer, so the
credentials refresh themselves before they expire (botocore's own assume-role fetcher, which asks
again with the same tags).
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.errors import SpecError
from benchwright.providers.aws.names import RUN_ID_TAG

RUN_ROLE_ENV = "BENCHWRIGHT_RUN_ROLE_ARN"  # the runner's run-scoped role (set by the launcher)
RUN_ID_ENV = "BENCHWRIGHT_RUN_ID"  # the run the runner serves: the session's tag
# IAM's session tag values: up to 256 of letters, digits, spaces and _.:/=+-@ (run ids are far narrower)
_TAG_VALUE = re.compile(r"[A-Za-z0-9_.:/=+\-@]{1,256}")
_SESSION_NAME_UNSAFE = re.compile(r"[^\w+=,.@-]")
SESSION_SECONDS = 3600  # role chaining's maximum
SESSION_METHOD = "benchwright-run-session"  # the credentials' method: "<this> <role ARN>"


def run_tags(run_id: str) -> list[dict[str, str]]:
    """The session tags of one run's session; a run id IAM would refuse is refused here, by name."""
    if not isinstance(run_id, str) or not _TAG_VALUE.fullmatch(run_id):
        raise SpecError("run_id", f"not usable as the session tag {RUN_ID_TAG}: {run_id!r}")
    return [{"Key": RUN_ID_TAG, "Value": run_id}]


def assume_role_args(role_arn: str, run_id: str, who: str) -> dict[str, Any]:
    """AssumeRole's arguments for ``who`` (runner, teardown) serving ``run_id``. The tag is not
    transitive: a run session has no reason to assume another role."""
    name = _SESSION_NAME_UNSAFE.sub("_", f"bw-{who}-{run_id}")[:64]
    return {
        "RoleArn": role_arn,
        "RoleSessionName": name,
        "Tags": run_tags(run_id),
        "DurationSeconds": SESSION_SECONDS,
    }


def run_session(role_arn: str, run_id: str, who: str, base: Any = None, region: str | None = None) -> Any:
    """A boto3 session acting as ``role_arn`` tagged with ``run_id``; its credentials are fetched on
    first use and again before they expire, from ``base``'s (the standing principal's) credentials."""
    import boto3
    import botocore.session
    from botocore.credentials import (
        AssumeRoleCredentialFetcher,
        CredentialProvider,
        CredentialResolver,
        DeferredRefreshableCredentials,
    )

    source = base or boto3.session.Session(region_name=region)
    args = assume_role_args(role_arn, run_id, who)
    fetcher = AssumeRoleCredentialFetcher(
        client_creator=source._session.create_client,  # the source session's own client factory
        source_credentials=source.get_credentials(),
        role_arn=role_arn,
        extra_args={k: v for k, v in args.items() if k != "RoleArn"},
    )
    credentials = DeferredRefreshableCredentials(  # the method names the role (a client says whose it is)
        refresh_using=fetcher.fetch_credentials, method=f"{SESSION_METHOD} {role_arn}"
    )

    class _RunProvider(CredentialProvider):  # type: ignore[misc]
        METHOD = SESSION_METHOD

        def load(self) -> Any:
            return credentials

    core = botocore.session.Session()
    # the source's loaded service models (most of a client's cost), not a second copy per session
    core.register_component("data_loader", source._session.get_component("data_loader"))
    core.register_component("credential_provider", CredentialResolver(providers=[_RunProvider()]))
    return boto3.session.Session(botocore_session=core, region_name=region or source.region_name)
