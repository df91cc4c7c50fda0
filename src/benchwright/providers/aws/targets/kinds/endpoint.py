"""An endpoint target is a database someone else runs: Benchwright creates, lists and deletes nothing."""

from __future__ import annotations

from benchwright.providers.aws.targets.kinds.base import AwsTargetKind

KIND = AwsTargetKind(name="endpoint", provider="endpoint")
