"""An endpoint target is a database someone else runs: Benchwright creates, lists and deletes nothing."""

from __future__ import annotations

from benchwright.providers.aws.targets.kinds.base import AwsTargetKind, Rehearsal
from benchwright.providers.aws.targets.kinds.endpoint.spec import EndpointTarget

KIND = AwsTargetKind(
    name="endpoint",
    provider="endpoint",
    target="benchwright.providers.aws.targets.kinds.endpoint.target:EndpointTarget",
    # nothing to stand in for: the spec's own hosts answer (in a rehearsal's specs, servers on 127.0.0.1)
    rehearsal=Rehearsal((), "none: the endpoint's own hosts answer"),
    spec=EndpointTarget,  # its spec model, which declares its timings and experiments
)
