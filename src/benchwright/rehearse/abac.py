"""IAM evaluation of the run-scoped (attribute-based) policies moto 5.2.5 cannot evaluate (issue 30 item 5).

moto treats every condition as met and has no policy variables, so a statement keyed on the run tag
(``aws:ResourceTag/benchwright:run-id`` equal to ``${aws:PrincipalTag/benchwright:run-id}``) would
allow every run everything. This evaluates exactly what the stack's run-scoped roles use
(infra/isolation.py), as IAM documents it, and refuses anything else loudly (``Unsupported``) rather
than guess:

- Effect Allow / Deny: an explicit Deny wins, then any Allow; otherwise the implicit deny.
- Action and Resource, with ``*`` and ``?`` wildcards (actions case-insensitive, resources not).
- Policy variables ``${aws:PrincipalTag/KEY}`` in Resource and in condition values. A variable whose
  key the request lacks matches nothing (IAM: the statement does not apply).
- Condition operators StringEquals, StringLike and Null; keys ``aws:PrincipalTag/K``,
  ``aws:ResourceTag/K`` and ``<service>:ResourceTag/K`` (the resource's tags), ``aws:RequestTag/K``
  and any other key from the request's context (``s3:prefix``). Several values of one key: any
  matches; several keys or operators: all must hold. A key the request lacks fails the string
  operators.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Decision = Literal["allow", "explicit-deny", "implicit-deny"]
OPERATORS = ("StringEquals", "StringLike", "Null")
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_PRINCIPAL_TAG = "aws:PrincipalTag/"


class Unsupported(ValueError):
    """A policy element this evaluator does not implement: never guessed at."""


@dataclass(frozen=True)
class Request:
    """One call as IAM sees it: the action, the resource ARN and the request context."""

    action: str
    resource: str
    principal_tags: Mapping[str, str] = field(default_factory=dict)
    resource_tags: Mapping[str, str] = field(default_factory=dict)
    context: Mapping[str, str] = field(default_factory=dict)  # s3:prefix, aws:RequestTag/K, ...

    def value(self, key: str) -> str | None:
        """The request context's value of a condition key (None: absent)."""
        if key.startswith(_PRINCIPAL_TAG):
            return self.principal_tags.get(key[len(_PRINCIPAL_TAG) :])
        service, _, rest = key.partition(":")
        if rest.startswith("ResourceTag/") and service:
            return self.resource_tags.get(rest[len("ResourceTag/") :])
        return self.context.get(key)


def substitute(text: str, request: Request) -> str | None:
    """``text`` with its policy variables replaced; None when one has no value in the request."""
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group(1)
        if not name.startswith(_PRINCIPAL_TAG):
            raise Unsupported(f"policy variable ${{{name}}} is not evaluated here")
        found = request.value(name)
        if found is None:
            missing = True
            return ""
        return found

    out = _VARIABLE.sub(one, text)
    return None if missing else out


def _listed(element: Any) -> list[str]:
    return [element] if isinstance(element, str) else [str(v) for v in element]


def _glob(pattern: str, value: str, case: bool) -> bool:
    if not case:
        pattern, value = pattern.lower(), value.lower()
    # fnmatchcase knows [...] classes, which IAM does not: escape them first
    return fnmatch.fnmatchcase(value, pattern.replace("[", "[[]"))


def _action_matches(statement: Mapping[str, Any], request: Request) -> bool:
    if "NotAction" in statement:
        raise Unsupported("NotAction is not evaluated here")
    return any(_glob(a, request.action, case=False) for a in _listed(statement.get("Action", [])))


def _resource_matches(statement: Mapping[str, Any], request: Request) -> bool:
    if "NotResource" in statement:
        raise Unsupported("NotResource is not evaluated here")
    for pattern in _listed(statement.get("Resource", [])):
        resolved = substitute(pattern, request)
        if resolved is not None and _glob(resolved, request.resource, case=True):
            return True
    return False


def _condition_holds(operator: str, key: str, values: list[str], request: Request) -> bool:
    if operator not in OPERATORS:
        raise Unsupported(f"condition operator {operator} is not evaluated here")
    actual = request.value(key)
    if operator == "Null":
        return any((actual is None) == (v.lower() == "true") for v in values)
    if actual is None:
        return False
    for value in values:
        wanted = substitute(value, request)
        if wanted is None:
            continue
        if operator == "StringEquals" and actual == wanted:
            return True
        if operator == "StringLike" and _glob(wanted, actual, case=True):
            return True
    return False


def _conditions_hold(statement: Mapping[str, Any], request: Request) -> bool:
    conditions = statement.get("Condition") or {}
    return all(
        _condition_holds(operator, key, _listed(values), request)
        for operator, block in conditions.items()
        for key, values in block.items()
    )


def statement_applies(statement: Mapping[str, Any], request: Request) -> bool:
    """Whether one policy statement covers the request (its action, resource and conditions)."""
    if "Principal" in statement or "NotPrincipal" in statement:
        raise Unsupported("a resource policy's Principal is not evaluated here (identity policies only)")
    return (
        _action_matches(statement, request)
        and _resource_matches(statement, request)
        and _conditions_hold(statement, request)
    )


def evaluate(statements: Sequence[Mapping[str, Any]], request: Request) -> Decision:
    """IAM's decision for one request over a principal's identity policy statements."""
    allowed = False
    for statement in statements:
        if not statement_applies(statement, request):
            continue
        if statement.get("Effect") == "Deny":
            return "explicit-deny"
        allowed = True
    return "allow" if allowed else "implicit-deny"


def operators_of(statements: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every condition operator the statements use (the contract test holds them to OPERATORS)."""
    return {op for s in statements for op in (s.get("Condition") or {})}
