"""Fixtures of the moto AWS account (tests/functions/aws_world.py) for the workflow tests."""

from tests.functions.aws_world import aws_world, world

__all__ = ["aws_world", "world"]
