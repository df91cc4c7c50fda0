"""API Lambda: API Gateway (REST, IAM auth) proxy events -> benchwright.api routes. No logic here."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from functions.api_routes import handle

logger = Logger(service="benchwright-api")


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle(event, context)
