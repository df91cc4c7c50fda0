"""Secrets Manager reads. Values never enter logs, state or results: callers pass them straight on."""

from __future__ import annotations

import json

from benchwright.errors import BenchwrightError, ProvisioningFailed
from benchwright.providers.aws.common import Clients, aws_call


def secret_value(
    clients: Clients, arn: str, key: str | None = None, fatal: type[BenchwrightError] = ProvisioningFailed
) -> str:
    """The secret string, or one key of a JSON secret (RDS-managed secrets hold {"username","password"})."""
    response = aws_call(
        f"secretsmanager get_secret_value {arn}",
        clients("secretsmanager").get_secret_value,
        SecretId=arn,
        fatal=fatal,
    )
    text: str = response.get("SecretString") or ""
    if key is None:
        return text
    try:
        value = json.loads(text)[key]
    except (ValueError, KeyError, TypeError):
        raise fatal(f"secret {arn}: no key {key!r}") from None
    return str(value)
