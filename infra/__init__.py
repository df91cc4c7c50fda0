"""The CDK app that deploys Benchwright into an AWS account (``python -m infra.app``, see cdk.json)."""
