"""One error taxonomy for the whole project.

Class names double as Step Functions error names, so the workflow can route on them: only classes
whose name starts with ``Retryable`` are safe to retry. Every error carries a one-line message that
names the field, host or file involved; the CLI prints that line and exits non-zero, no traceback.
"""

from __future__ import annotations


class BenchwrightError(Exception):
    """Base of every error we raise on purpose."""

    exit_code = 1


# ---------------------------------------------------------------- input (nothing has been created yet)
class SpecError(BenchwrightError):
    """A spec, property file or setting is invalid. ``field`` is the dotted path of the culprit."""

    exit_code = 2

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.detail = message
        super().__init__(f"{field}: {message}" if field else message)


class PropertyFileError(SpecError):
    """A YCSB-style property file could not be parsed: names the file and line."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}", message)
        self.path = path
        self.line = line


class CapabilityError(SpecError):
    """A workload was asked to run on an engine that lacks what it needs (e.g. TPC-C on Redis)."""


class UsageError(BenchwrightError):
    """A native tool's command line (pgbench, sysbench...) has a flag we do not know or implement:
    exit 1 naming it, as the native tools do (never help text and exit 0)."""


class ToolMissingError(BenchwrightError):
    """A native benchmark tool is not installed; the message says how to install it."""


# ---------------------------------------------------------------- connecting and running
class TargetUnreachable(BenchwrightError):
    """The database could not be reached or refused the login. Names the host and the cause."""

    def __init__(self, host: str, cause: str) -> None:
        self.host = host
        self.cause = cause
        super().__init__(f"{host}: {cause}")


class SchemaMissing(BenchwrightError):
    """The run phase found no data: the load phase has not been run (names the table)."""


class AllOperationsFailed(BenchwrightError):
    """The phase ran, but every operation failed: a result, never a success (the document is kept)."""


class RunAborted(BenchwrightError):
    """The measured phase stopped early (server gone, interrupted); a partial result exists."""


# ---------------------------------------------------------------- provisioning and the workflow
class ProvisioningFailed(BenchwrightError):
    """A target or runner could not be created (quota, bad instance class, port taken ...)."""


class RetryableProvisioningError(ProvisioningFailed):
    """A transient failure while provisioning (throttling, capacity); safe to retry."""


class TargetNotReady(BenchwrightError):
    """The target did not accept connections within its readiness timeout."""


class RunnerFailed(BenchwrightError):
    """The runner process or task exited with an error or never started."""


class IngestFailed(BenchwrightError):
    """Writing results to the time-series store failed; the raw document is kept."""


class RetryableIngestError(IngestFailed):
    """A transient ingest failure (throttling); safe to retry."""


class NotifyFailed(BenchwrightError):
    """The notification could not be delivered; results are unaffected."""


class TeardownFailed(BenchwrightError):
    """Some resources could not be deleted; the janitor will retry by tag."""
