"""The HTTP API of a deployed Benchwright: submit runs, list them, read status and reports, cancel.

The core holds the framework-free parts: ``models`` (request / response bodies) and ``backend``
(Step Functions and S3). The routes (powertools APIGatewayRestResolver with validation) live with
the Lambda in functions/api_routes.py. Routes never see an unauthenticated or oversize request:
those are refused before routing with a documented 4xx.
"""
