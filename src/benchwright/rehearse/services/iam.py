"""Principals: each Lambda sandbox signs its calls with a session of its function's role, and moto's
IAM evaluation decides those calls against the role's policies from the template.

Only calls signed by a session of a stack role are checked: each Lambda's, the runner task role's
(ECS), the EC2 runner's instance profile role and the state machines' (rehearse/principals.py); the
rehearsal's own calls (creating the account, reading what is left) are not a stack principal's.
``hooks.signed`` counts the calls evaluated per principal (execution.json ``signed_calls``). What moto 5.2 can evaluate, and what
this does about the rest:
- Actions: evaluated, so a handler calling what its role does not grant is denied (AccessDenied),
  recorded in ``hooks.denials`` and reported (resources-after.json ``access_denied``, the summary).
- Resources: moto computes the resource of S3 requests only (bucket and key ARNs), and those are
  evaluated; for every other service it checks against ``*``, which an ARN-scoped statement never
  matches, so the Resource element is taken as matching there (``_resource_star``): resources outside
  S3 are held by tests/infra/test_stack.py's resource and tag tests, not here.
- Conditions: moto treats every condition operator but StringEquals on sts:ExternalId as met, so the
  stack's conditions (aws:RequestTag / aws:ResourceTag run tags, aws:ViaAWSService, ecs:cluster,
  cloudwatch:namespace, secretsmanager:ResourceTag) are not evaluated here either: tests/infra/
  (test_stack.py, test_iam_coverage.py, test_resilience.py) assert those statements instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from benchwright.rehearse.run_sessions import credential_scope as _credential

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


# SigV4 signing name -> IAM action prefix, where they differ (moto forms the action from the former)
IAM_PREFIX = {"monitoring": "cloudwatch", "tagging": "tag"}
# API operation -> IAM action, where they differ (moto forms the action from the operation name):
# Step Functions' Lambda tasks call Invoke, which IAM authorizes as lambda:InvokeFunction
IAM_ACTION = {"lambda:Invoke": "lambda:InvokeFunction"}


def _iam_action(scope: list[str], action: str) -> str:
    """The IAM action a denied call needed, as a policy names it."""
    named = f"{IAM_PREFIX.get(scope[3], scope[3]) if len(scope) > 3 else '?'}:{action}"
    return IAM_ACTION.get(named, named)


def install(hooks: Hooks) -> None:
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.iam.access_control import IAMPolicyStatement

    def authorize(self: Any, iam_request_cls: type, resource: str = "*") -> None:
        scope = _credential(self.headers)
        run = hooks.run_sessions.get(scope[0])
        principal = hooks.sessions.get(scope[0])
        if principal is None and run is None:
            return  # not a stack principal of this rehearsal (the rehearsal's own calls): unchecked
        if principal is not None:
            with hooks.lock:
                hooks.signed[principal] = hooks.signed.get(principal, 0) + 1
        parsed = urlparse(self.uri)
        path = self.raw_path + ("?" + parsed.query if parsed.query else "")
        action = self._get_action()
        try:
            request = iam_request_cls(
                account_id=self.current_account,
                method=self.method,
                path=path,
                data=self.data,
                body=self.raw_body,
                headers=self.headers,
                action=action,
            )
            service = scope[3] if len(scope) > 3 else ""
            if service in IAM_PREFIX:
                request._action = f"{IAM_PREFIX[service]}:{request._action.split(':', 1)[1]}"
            request._action = IAM_ACTION.get(request._action, request._action)
            if run is None:
                request.check_action_permitted(resource)
        except Exception as exc:
            with hooks.lock:
                hooks.denials.append(
                    {
                        "principal": str(principal or getattr(run, "label", "?")),
                        "action": _iam_action(scope, action),
                        "resource": resource,
                        "error": type(exc).__name__,
                    }
                )
            raise
        if run is not None:  # a run-scoped session: its tags decide, which moto cannot evaluate
            _check_run_session(hooks, run, self, str(request._action), scope, resource)

    original = IAMPolicyStatement.__dict__["_check_element_matches"]

    def _resource_star(statement: Any, element: str, value: str) -> bool:
        if element == "Resource" and value == "*":
            return True  # moto did not compute the resource (see the module docstring)
        return bool(original(statement, element, value))

    hooks.patch(ActionAuthenticatorMixin, "_authenticate_and_authorize_action", authorize)
    _trust_role_sessions(hooks)
    hooks.patch(IAMPolicyStatement, "_check_element_matches", _resource_star)


def _session_role(arn: str) -> str | None:
    """The role of a role session: ``arn:aws:sts::A:assumed-role/R/S`` -> ``arn:aws:iam::A:role/R``."""
    head, _, rest = arn.partition(":assumed-role/")
    if not rest or not head.startswith("arn:aws:sts::"):
        return None
    return f"arn:aws:iam::{head.rsplit(':', 1)[-1]}:role/{rest.split('/', 1)[0]}"


def _trust_role_sessions(hooks: Hooks) -> None:
    """moto matches a trust policy's principal to the caller's ARN exactly, so a role session (how
    every stack principal signs) never matches the role ARN a trust policy names; IAM matches it
    (a role principal covers its sessions). Evaluated once more as the session's role, moto's own
    way otherwise (its trust conditions: StringEquals on sts:ExternalId only)."""
    from moto.iam.access_control import IAMPolicy, IAMRequestBase, PermissionResult
    from moto.iam.utils import format_incoming_conditional_values

    original = IAMRequestBase.__dict__["_check_role_trust_relationship"]

    def trusted(self: Any, role_arn: str) -> bool:
        if original(self, role_arn):
            return True
        role_principal = _session_role(str(self._access_key.arn))
        if role_principal is None:
            return False
        policy = IAMPolicy(self.backend.get_role_by_arn(role_arn).assume_role_policy_document)
        found = policy.is_action_permitted(
            self._action, role_arn, role_principal, format_incoming_conditional_values(self._data)
        )
        return bool(found == PermissionResult.PERMITTED)

    hooks.patch(IAMRequestBase, "_check_role_trust_relationship", trusted)


def _check_run_session(
    hooks: Hooks, run: Any, response: Any, action: str, scope: list[str], resource: str
) -> None:
    """One call of a run session, decided by abac (rehearse/run_sessions.py); a denial is recorded
    and answered AccessDenied, a call it cannot evaluate is let through and listed."""
    from moto.core.exceptions import AccessDeniedError

    from benchwright.rehearse.run_sessions import check_call, request_params

    region = scope[2] if len(scope) > 2 else ""
    with hooks.lock:
        hooks.signed[run.label] = hooks.signed.get(run.label, 0) + 1
    try:
        denials = check_call(
            hooks.run_roles.get(run.role_arn, []),
            run,
            action,
            request_params(response),
            resource,
            response.current_account,
            region,
        )
    except Exception as exc:  # an unknown resource, an unsupported element: said, never guessed
        with hooks.lock:
            hooks.run_unchecked.append(
                {"principal": run.label, "action": action, "why": f"{type(exc).__name__}: {exc}"}
            )
        return
    if denials:
        with hooks.lock:
            hooks.denials.extend(denials)
        raise AccessDeniedError(user_arn=run.label, action=action)


def principal_check(hooks: Hooks) -> Any:
    """The same evaluation for a service answered outside moto's responses (services/pi.py): a call
    signed by a stack principal must be granted by its role, else NotAuthorizedException."""

    def check(environ: dict[str, Any], body: bytes) -> None:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.iam.access_control import IAMRequest

        from benchwright.rehearse.services.pi import PiError

        headers = {"Authorization": str(environ.get("HTTP_AUTHORIZATION", ""))}
        if environ.get("HTTP_X_AMZ_SECURITY_TOKEN"):
            headers["X-Amz-Security-Token"] = str(environ["HTTP_X_AMZ_SECURITY_TOKEN"])
        scope = _credential(headers)
        principal = hooks.sessions.get(scope[0])
        if principal is None:
            return  # not a stack principal of this rehearsal: unchecked, as for moto's services
        try:
            request = IAMRequest(
                account_id=DEFAULT_ACCOUNT_ID,
                method=str(environ.get("REQUEST_METHOD", "POST")),
                path=str(environ.get("PATH_INFO", "/")),
                data={},
                body=body,
                headers=headers,
                action="GetResourceMetrics",
            )
            request.check_action_permitted("*")
        except Exception as exc:
            with hooks.lock:
                hooks.denials.append(
                    {
                        "principal": principal,
                        "action": "pi:GetResourceMetrics",
                        "resource": "*",
                        "error": type(exc).__name__,
                    }
                )
            raise PiError(
                "NotAuthorizedException", f"{principal} is not authorized to pi:GetResourceMetrics"
            ) from exc

    return check
