"""What the janitor finds by tag: a ``Resource`` a run left, as each AWS kind's ``find`` lists it
(providers/aws/targets/kinds/), and the tag helpers those listers share."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchwright.providers.aws.common import paginate
from benchwright.providers.aws.names import EXPIRES_TAG, RUN_ID_TAG


@dataclass(frozen=True)
class Resource:
    kind: str  # rds-instance, rds-cluster, elasticache-replication-group, memorydb-cluster, ec2-instance ...
    id: str
    tags: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def run_id(self) -> str | None:
        return self.tags.get(RUN_ID_TAG)

    def expired(self, now: datetime) -> bool:
        raw = self.tags.get(EXPIRES_TAG)
        if not raw:
            return False
        try:
            return datetime.strptime(raw, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) <= now
        except ValueError:
            return False


def kv(tags: list[dict[str, str]] | None, key: str = "Key", value: str = "Value") -> dict[str, str]:
    """AWS's list of tag pairs as a dict (ECS spells the pair's keys in lower case)."""
    return {t[key]: t.get(value, "") for t in tags or []}


def ours(tags: dict[str, str]) -> bool:
    """Tagged by a Benchwright run."""
    return RUN_ID_TAG in tags


def tagged(
    rds: Any, op: str, key: str, ident: str, arn: str, prefix: str = "", status: str = "", **filters: Any
) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """Each item of an RDS Describe* listing a run tagged (its tags inline, else asked for), but those
    named outside ``prefix`` and those whose ``status`` says deleting: the RDS and Aurora listers."""
    for item in paginate(rds, op, key, **filters):
        if not str(item.get(ident, "")).startswith(prefix) or (status and item.get(status) == "deleting"):
            continue
        tags = kv(item.get("TagList")) or kv(rds.list_tags_for_resource(ResourceName=item[arn])["TagList"])
        if ours(tags):
            yield item, tags
