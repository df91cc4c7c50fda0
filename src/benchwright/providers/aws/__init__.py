"""AWS providers: the target kinds (targets/kinds/NAME/: RDS, Aurora, ElastiCache, MemoryDB, EC2
self-managed, endpoint; the ECS runner's tasks); EC2 / ECS runners; CloudWatch metrics; S3 results
with a Timestream or InfluxDB sink; Price List; Slack via Secrets Manager; tags and the janitor.
``aws_providers`` (bundle.py) bundles them for one run's spec.

Importing the package imports nothing else: the runner's run session takes only its names
(names.py), and the spec layer reads the kinds' spec models below it. Import what you need from its
module (``from benchwright.providers.aws.bundle import aws_providers``).
"""
