"""The rehearsal's check of run-scoped sessions (issue 30 item 5): what moto cannot decide, abac does.

The runner, Teardown and CheckOperations act through sessions of the stack's run-scoped roles (infra/isolation.py),
assumed with the session tag ``benchwright:run-id`` (providers/aws/run_session.py). moto answers that
AssumeRole but keeps no session tags and treats every condition as met, so its own evaluation would
let run A's session read run B's secret. Here:

- ``install`` watches moto's AssumeRole: a session of a run-scoped role is listed in
  ``hooks.run_sessions`` with its role, its caller and its tags;
- ``check_call`` decides each call signed by such a session with benchwright.rehearse.abac over the
  role's statements from the template, the session's tags as ``aws:PrincipalTag``, and the tags the
  named resource carries in moto (``aws:ResourceTag`` / ``<service>:ResourceTag``). A call on a
  resource of another run is an explicit or implicit deny: recorded in ``hooks.denials`` (the
  rehearsal fails on any) and answered AccessDenied, as AWS would.

Limits, said rather than hidden: the trust policy's conditions (which tags) are not evaluated (abac
evaluates identity policies only; services/iam.py holds the trust's principal); a call whose
resource this cannot find in moto (one already deleted: a repeated, idempotent teardown) is let
through to moto's own answer (NotFound) and listed in ``hooks.run_unchecked`` (execution.json
``run_session_calls_unchecked``), never silently allowed. AWS would likely refuse such a call
(no resource tag to match), as it already would for the standing roles' tag conditions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchwright.rehearse import abac
from benchwright.rehearse.stack import Resolver, resources_of

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


@dataclass(frozen=True)
class RunSession:
    """One session of a run-scoped role: which role, who assumed it, with which tags."""

    role_arn: str
    caller: str
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        run = ",".join(f"{k}={v}" for k, v in sorted(self.tags.items()))
        return f"run session {self.role_arn.rsplit('/', 1)[-1]} [{run}] (assumed by {self.caller})"


def run_roles(template: dict[str, Any], resolver: Resolver) -> dict[str, list[dict[str, Any]]]:
    """Role ARN -> its identity-policy statements (resolved), for each role a session must tag
    (``sts:TagSession`` in its trust policy): the run-scoped roles."""
    roles: dict[str, list[dict[str, Any]]] = {}
    names: dict[str, str] = {}
    for logical, res in resources_of(template, "AWS::IAM::Role").items():
        props = res["Properties"]
        if "sts:TagSession" not in json.dumps(props.get("AssumeRolePolicyDocument", {})):
            continue
        arn = str(resolver.resolve({"Fn::GetAtt": [logical, "Arn"]}))
        names[logical] = arn
        roles[arn] = [
            s for p in props.get("Policies", []) for s in resolver.resolve(p["PolicyDocument"])["Statement"]
        ]
    for res in resources_of(template, "AWS::IAM::Policy").values():
        props = res["Properties"]
        for ref in props.get("Roles", []):
            target = str(ref.get("Ref")) if isinstance(ref, dict) else ""
            if target in names:
                roles[names[target]] += resolver.resolve(props["PolicyDocument"])["Statement"]
    return roles


# ------------------------------------------------------------------ the resources a call names
Lookup = Callable[[str, str, str], list[tuple[str, dict[str, str]]]]  # (account, region, id) -> [(arn, tags)]


def _backend(service: str, account: str, region: str) -> Any:
    from moto.backends import get_backend

    return get_backend(service)[account][region]  # type: ignore[call-overload]


def _tags(items: Any, key: str = "Key", value: str = "Value") -> dict[str, str]:
    if isinstance(items, dict):
        items = items.get("TagList", items.get("Tags", []))
    return {str(t[key]): str(t[value]) for t in items or []}


def _rds(kind: str) -> Lookup:
    def find(account: str, region: str, name: str) -> list[tuple[str, dict[str, str]]]:
        arn = f"arn:aws:rds:{region}:{account}:{kind}:{name}"
        backend = _backend("rds", account, region)
        if backend._get_resource_for_tagging(arn) is None:
            raise LookupError(f"no {arn}")
        return [(arn, _tags(backend.list_tags_for_resource(arn)))]

    return find


def _secret(account: str, region: str, name: str) -> list[tuple[str, dict[str, str]]]:
    secret = _backend("secretsmanager", account, region).secrets.get(name)
    if secret is None:
        raise LookupError(f"no secret {name}")
    return [(str(secret.arn), _tags(getattr(secret, "tags", None)))]


def _instance(account: str, region: str, name: str) -> list[tuple[str, dict[str, str]]]:
    backend = _backend("ec2", account, region)
    backend.get_instance(name)  # raises for an instance moto does not know
    tags = backend.tags.get(name, {})
    return [(f"arn:aws:ec2:{region}:{account}:instance/{name}", {str(k): str(v) for k, v in tags.items()})]


def _interface(account: str, region: str, name: str) -> list[tuple[str, dict[str, str]]]:
    backend = _backend("ec2", account, region)
    backend.get_network_interface(name)  # raises for an interface moto does not know
    tags = backend.tags.get(name, {})
    arn = f"arn:aws:ec2:{region}:{account}:network-interface/{name}"
    return [(arn, {str(k): str(v) for k, v in tags.items()})]


def _task(account: str, region: str, name: str) -> list[tuple[str, dict[str, str]]]:
    tags = _backend("ecs", account, region).list_tags_for_resource(name)
    return [(name, _tags(tags, "key", "value"))]


def _cache(kind: str, service: str = "elasticache") -> Lookup:
    def find(account: str, region: str, name: str) -> list[tuple[str, dict[str, str]]]:
        sep = ":" if service == "elasticache" else "/"
        arn = f"arn:aws:{service}:{region}:{account}:{kind}{sep}{name}"
        backend = _backend(service, account, region)
        if kind == "replicationgroup" and name not in backend.replication_groups:
            raise LookupError(f"no {arn}")  # (parameter groups and MemoryDB raise by themselves)
        listed = backend.list_tags_for_resource(arn) if service == "elasticache" else backend.list_tags(arn)
        return [(arn, _tags(listed))]

    return find


# action -> (the request parameter naming the resource, how to find its ARN and tags)
RESOURCES: dict[str, tuple[str, Lookup]] = {
    "secretsmanager:GetSecretValue": ("SecretId", _secret),
    "rds:DeleteDBInstance": ("DBInstanceIdentifier", _rds("db")),
    "rds:DeleteDBCluster": ("DBClusterIdentifier", _rds("cluster")),
    "rds:DeleteDBParameterGroup": ("DBParameterGroupName", _rds("pg")),
    "rds:DeleteDBClusterParameterGroup": ("DBClusterParameterGroupName", _rds("cluster-pg")),
    "rds:DeleteDBSnapshot": ("DBSnapshotIdentifier", _rds("snapshot")),
    "rds:DeleteDBClusterSnapshot": ("DBClusterSnapshotIdentifier", _rds("cluster-snapshot")),
    "elasticache:DeleteReplicationGroup": ("ReplicationGroupId", _cache("replicationgroup")),
    "elasticache:DeleteCacheParameterGroup": ("CacheParameterGroupName", _cache("parametergroup")),
    "memorydb:DeleteCluster": ("ClusterName", _cache("cluster", "memorydb")),
    "memorydb:DeleteParameterGroup": ("ParameterGroupName", _cache("parametergroup", "memorydb")),
    "ec2:TerminateInstances": ("InstanceId", _instance),
    "ec2:DeleteNetworkInterface": ("NetworkInterfaceId", _interface),
    "ecs:StopTask": ("task", _task),
}


def named(params: Mapping[str, Any], key: str) -> list[str]:
    """The values of ``key`` in a call's parameters: a JSON body's, or a query's (``InstanceId.1``...)."""
    found = params.get(key)
    if isinstance(found, list):
        return [str(v) for v in found]
    if found is not None:
        return [str(found)]
    indexed = sorted(
        (k for k in params if re.fullmatch(re.escape(key) + r"\.\d+", k)),
        key=lambda k: int(k.rsplit(".", 1)[1]),
    )
    return [str(params[k]) for k in indexed]


def requests_for(
    action: str, params: Mapping[str, Any], resource: str, session: RunSession, account: str, region: str
) -> list[abac.Request]:
    """The IAM requests one call makes (one per resource it names); LookupError when a resource of
    an action this knows cannot be found in moto. S3's resource is moto's own (bucket/key ARN)."""
    context: dict[str, str] = {}
    if action == "s3:ListBucket" and params.get("prefix") is not None:
        context["s3:prefix"] = str(params["prefix"])
    if action not in RESOURCES:
        return [abac.Request(action, resource, principal_tags=session.tags, context=context)]
    key, lookup = RESOURCES[action]
    names = named(params, key)
    if not names:
        raise LookupError(f"{action}: no {key} in the call")
    found = [hit for name in names for hit in lookup(account, region, name)]
    return [abac.Request(action, arn, session.tags, tags, context) for arn, tags in found]


def check_call(
    statements: list[dict[str, Any]],
    session: RunSession,
    action: str,
    params: Mapping[str, Any],
    resource: str,
    account: str,
    region: str,
) -> list[dict[str, str]]:
    """The denials of one call by a run session (empty: allowed). Unsupported policy elements and
    unknown resources raise: the caller decides what an unevaluated call means."""
    if action == "sts:GetCallerIdentity":
        return []  # IAM never denies it (no permission is needed to ask who one is)
    denials = []
    for request in requests_for(action, params, resource, session, account, region):
        decision = abac.evaluate(statements, request)
        if decision != "allow":
            denials.append(
                {
                    "principal": session.label,
                    "action": action,
                    "resource": request.resource,
                    "error": decision,
                }
            )
    return denials


def request_params(response: Any) -> dict[str, Any]:
    """A moto request's parameters: its JSON body, else its query/form values (the first of each)."""
    body = response.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.lstrip().startswith("{"):
        try:
            loaded = json.loads(body)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            return loaded
    return {k: v[0] if isinstance(v, list) and v else v for k, v in (response.querystring or {}).items()}


def credential_scope(headers: Any) -> list[str]:
    """SigV4's credential scope: [access key id, date, region, service, "aws4_request"]."""
    auth = str(headers.get("Authorization") or "")
    if "Credential=" not in auth:
        return [""]
    return auth.split("Credential=", 1)[1].split(",", 1)[0].split("/")


def session_tags(response: Any) -> dict[str, str]:
    """The ``Tags`` of an AssumeRole request, parsed by moto (a list of Key/Value) or as the query
    sends them (``Tags.member.N.Key``)."""
    parsed = response._get_param("Tags")
    if isinstance(parsed, list):
        return {str(t.get("Key")): str(t.get("Value") or "") for t in parsed if isinstance(t, dict)}
    tags = {}
    for i in range(1, 51):  # IAM allows at most 50 session tags
        key = response._get_param(f"Tags.member.{i}.Key")
        if key is None:
            break
        tags[str(key)] = str(response._get_param(f"Tags.member.{i}.Value") or "")
    return tags


def install(hooks: Hooks) -> None:
    """Watch moto's AssumeRole: a session of a run-scoped role goes into ``hooks.run_sessions``."""
    from moto.sts.responses import TokenResponse

    original = TokenResponse.__dict__["assume_role"]

    def assume_role(self: Any) -> Any:
        result = original(self)
        role_arn = str(self._get_param("RoleArn") or "")
        if role_arn in hooks.run_roles:
            tags = session_tags(self)
            caller = hooks.sessions.get(credential_scope(self.headers)[0], "an unknown caller")
            key_id = str(result.result["Credentials"].access_key_id)
            with hooks.lock:
                hooks.run_sessions[key_id] = RunSession(role_arn, caller, tags)
        return result

    hooks.patch(TokenResponse, "assume_role", assume_role)
