"""The Fargate runner's ECS tasks: a runner kind (kind.py), which owns resources but serves no target."""
