"""The HTTP API of a deployed Benchwright: submit runs, list them, read status and reports, cancel.

``app.resolver`` is a powertools APIGatewayRestResolver with validation; ``app.handle`` is what the
Lambda (functions/api.py) calls. Routes never see an unauthenticated or oversize request: those are
refused before routing with a documented 4xx.
"""
