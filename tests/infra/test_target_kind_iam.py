"""Each registered AWS target kind's IAM actions are granted by the stack: its listing and deletion to
the janitor's role (Sweep), its deletion to Teardown's run-scoped role (TEARDOWN_ACTIONS,
infra/isolation.py). Read from infra/permissions.py's grant functions without a synth: they are the
statements the stack attaches (tests/infra/test_stack.py)."""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest

from benchwright.providers.aws.run_session import TEARDOWN_ACTIONS
from benchwright.providers.aws.targets.kinds import kinds


class Role:
    """Stands where a Lambda function is passed: keeps the actions of each statement added to it."""

    def __init__(self) -> None:
        self.actions: set[str] = set()

    def add_to_role_policy(self, statement: Any) -> None:
        self.actions.update(statement.actions)


def granted(*grants: Any) -> set[str]:
    role = Role()
    for grant in grants:
        grant(role)
    return role.actions


def allowed(action: str, actions: set[str]) -> bool:
    return any(fnmatch.fnmatchcase(action.lower(), g.lower()) for g in actions)


@pytest.mark.parametrize("name", sorted(kinds()))
def test_each_kinds_actions_are_granted_to_the_roles_that_list_and_delete(name: str) -> None:
    from infra import permissions

    kind = kinds()[name]
    janitor_role = granted(permissions._describe, permissions._delete, permissions._janitor)
    teardown_role = set(TEARDOWN_ACTIONS)
    missing = [a for a in (*kind.iam_list, *kind.iam_delete) if not allowed(a, janitor_role)]
    assert not missing, f"{name}: the janitor's role lacks {missing}"
    missing = [a for a in kind.iam_delete if not allowed(a, teardown_role)]
    assert not missing, f"{name}: Teardown's role lacks {missing}"


def test_every_delete_the_stack_grants_is_declared_by_a_kind() -> None:
    from infra import permissions

    declared = {action for kind in kinds().values() for action in kind.iam_delete}
    assert set(permissions.DELETE) <= declared  # no grant to delete a kind nobody declares
    # a run's teardown deletes (through its run session) everything a sweeper deletes of a lost run
    assert sorted(TEARDOWN_ACTIONS) == sorted(permissions.DELETE)
