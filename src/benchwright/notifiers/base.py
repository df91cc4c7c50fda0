"""What a notifier kind declares, so that no module outside its folder needs to know its name.

The spec model validates ``notify.<name>`` with ``spec``; a local run sends through ``local``; the AWS
path through ``cloud`` (None: the kind cannot send from AWS, and a cloud spec naming it is refused).
A secret is only ever named by reference: an environment variable or a Secrets Manager ARN, in a field
ending ``_env`` / ``_arn`` (what the spec's secret guard, benchwright.specguard, lets through).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from benchwright.providers.base import Notifier

# (the kind's validated section) -> a notifier for a local run, or None when it has nothing to send there
LocalSender = Callable[[Any], "Notifier | None"]
# (section or None, AWS clients, the deployment's own secret ARN or None) -> a notifier, or None
CloudSender = Callable[[Any, Any, "str | None"], "Notifier | None"]
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,30}$")


@dataclass(frozen=True)
class NotifierKind:
    """One notifier kind (see the module docstring)."""

    name: str  # the key under ``notify:`` in a spec
    spec: type[BaseModel]  # the section's model (a StrictModel: unknown fields are errors)
    local: LocalSender
    cloud: CloudSender | None = None
    # the Secrets Manager name the stack lets notifying Lambdas read: ``<name>`` or ``<name>/<anything>``
    secret_name: str | None = None
    secret_arn_field: str | None = None  # the section's field holding such an ARN
    # the kind is sent from AWS even when a spec does not configure it (the deployment's own secret)
    uses_deployment_secret: bool = False

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name) or self.name == "on":
            raise ValueError(f"notifier kind {self.name!r}: a lower-case name (a-z, 0-9, _), not 'on'")
        if self.secret_arn_field is not None:
            if self.secret_name is None or not self.secret_arn_field.endswith("_arn"):
                raise ValueError(
                    f"notifier kind {self.name}: secret_arn_field ends in _arn and comes with secret_name"
                )
            if self.secret_arn_field not in self.spec.model_fields:
                raise ValueError(
                    f"notifier kind {self.name}: {self.secret_arn_field} is not a field of its spec"
                )

    def secret_allowed(self, arn: str) -> bool:
        """The secret's name (full ARN or partial, without the 6-character suffix Secrets Manager adds) is
        the stack's convention for this kind: ``<secret_name>`` or ``<secret_name>/<name>``."""
        if self.secret_name is None:
            return False
        name = arn.split(":secret:", 1)[-1]
        pattern = rf"^{re.escape(self.secret_name)}(/[A-Za-z0-9/_+=.@-]+)?(-[A-Za-z0-9]{{6}})?$"
        return re.match(pattern, name) is not None

    def secret_arn(self, section: BaseModel) -> str | None:
        """The Secrets Manager ARN the section names, if any."""
        if self.secret_arn_field is None:
            return None
        value = getattr(section, self.secret_arn_field, None)
        return str(value) if value else None
