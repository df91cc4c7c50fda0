"""The AWS providers bundled for one run's spec (``aws_providers``), and the time-series sink chosen at
deploy time (``make_sink``). Imported when a stage needs them, not by importing the package: the
runner's run session reads only the package's names (names.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.errors import SpecError
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.probe import Probe
from benchwright.providers.base import Providers, Target
from benchwright.spec import BenchmarkSpec, TargetSpec


def make_sink(config: AwsSettings, clients: Clients) -> Any:
    """The time-series sink chosen at deploy time (``BENCHWRIGHT_SINK``), or None."""
    if config.sink == "timestream":
        from benchwright.providers.aws.timestream import TimestreamSink

        return TimestreamSink(clients, config.timestream_database, config.timestream_table)
    if config.sink == "influxdb":
        return LazyInfluxSink(config, clients)
    return None


class LazyInfluxSink:
    """Fetches the InfluxDB API token from its own secret only when something is written
    (``{"token": ...}`` or the bare token: benchwright.providers.aws.influx)."""

    def __init__(self, config: AwsSettings, clients: Clients) -> None:
        self.config = config
        self.clients = clients

    def write(self, record: Any) -> int:
        from benchwright.errors import IngestFailed
        from benchwright.providers.aws.influx import InfluxSink, token_from_secret
        from benchwright.providers.aws.secrets import secret_value

        if not self.config.influx_url or not self.config.influx_token_secret_arn:
            raise IngestFailed(
                "influxdb sink: BENCHWRIGHT_INFLUX_URL and BENCHWRIGHT_INFLUX_TOKEN_SECRET_ARN are needed"
            )
        arn = self.config.influx_token_secret_arn
        token = token_from_secret(secret_value(self.clients, arn, fatal=IngestFailed), f"secret {arn}")
        sink = InfluxSink(self.config.influx_url, token, self.config.influx_org, self.config.influx_bucket)
        return sink.write(record)


def aws_providers(
    spec: BenchmarkSpec | None,
    config: AwsSettings | None = None,
    clients: Clients | None = None,
    probe: Probe | None = None,
    ingest: bool = True,
) -> Providers:
    """Every provider for one run of ``spec`` (the cell's concrete spec; None: a run finished without
    one, an aborted execution whose input held none: no runners, the deployment's Slack secret).

    ``ingest=False`` leaves the time-series sink out of the store: only StoreResults ingests (it is
    the stage with the sink's permissions and, for InfluxDB, the VPC); later saves (price, final
    status, suite summary) change nothing the sink holds."""
    from benchwright.providers.aws.cloudwatch import CloudWatchMetrics
    from benchwright.providers.aws.launcher import AwsRunnerLauncher
    from benchwright.providers.aws.notify import notifier_for
    from benchwright.providers.aws.pricelist import PriceList, with_cached_copy
    from benchwright.providers.aws.pricing import AwsPriceBook
    from benchwright.providers.aws.s3 import S3Artifacts
    from benchwright.providers.aws.store import S3ResultStore
    from benchwright.providers.aws.targets import TARGETS
    from benchwright.spec.runners import RunnerSpec

    config = config or AwsSettings.from_env()
    clients = clients or Clients(config)

    def target(spec: TargetSpec, run_id: str, handle: Mapping[str, str] | None) -> Target:
        if spec.provider not in TARGETS:
            raise SpecError(
                "target.provider", f"{spec.provider!r} cannot run on AWS (one of {', '.join(TARGETS)})"
            )
        return TARGETS[spec.provider](spec, run_id, handle, clients=clients, config=config, probe=probe)

    artifacts = S3Artifacts(clients, config.results_bucket)
    return Providers(
        target=target,
        launcher=AwsRunnerLauncher(clients, config, spec.runner if spec is not None else RunnerSpec()),
        metrics=CloudWatchMetrics(clients),
        store=S3ResultStore(artifacts, make_sink(config, clients) if ingest else None),
        notifier=notifier_for(spec.notify if spec is not None else None, clients, config.slack_secret_arn),
        prices=AwsPriceBook(with_cached_copy(PriceList(clients, config.region))),
        artifacts=artifacts,
    )
