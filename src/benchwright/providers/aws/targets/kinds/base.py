"""What an AWS target kind declares, so that the janitor and the stack's policy read it from one place.

A kind owns the resource kinds it creates (the janitor's ``Resource.kind``), each with its one deletion
path (benchwright.providers.aws.deletion) and its rank in the deletion order; it lists them by tag
itself (``find``, in the service it names as ``lister``), and names the IAM actions that listing,
deleting, describing, creating, its events and its operations need (infra/permissions.py and
run_session.py grant their union; tests/infra/test_target_kind_iam.py holds the two together). It
prices its targets (``price``, over the Price List services it names: the price book calls it, no
branch on the kind there) and says how a rehearsal stands in for it (``rehearsal``: the moto hooks
in rehearse/ that turn its resources into real servers on 127.0.0.1, installed from these). It
prices a month of a target for the seeds' tables (``monthly``), what it bills by use, and where it
sits for cross-AZ transfer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# (clients, the resource's id, its extra fields) -> True when gone or going, False when AWS says "not yet"
Deleter = Callable[[Any, str, dict[str, str]], bool]

# Deletion ranks: what runs first, then the nodes and targets (and their snapshots), then what they use
# (interfaces, parameter groups), which AWS refuses to delete while still in use. A kind adds a small
# offset within a rank to keep its own order (an Aurora cluster after its member instances).
RUNNERS, NODES, TARGETS, INTERFACES, GROUPS = 100, 200, 300, 500, 600


@dataclass(frozen=True)
class ResourceKind:
    name: str  # the janitor's Resource.kind: "rds-instance", "memorydb-parameter-group", ...
    delete: Deleter
    order: int  # lower is deleted first (see the ranks above)


# (the price book, the kind's typed target spec, billed hours, the line items to add to) -> None
TargetPricer = Callable[[Any, Any, float, Any], None]


# prices and resources: what the monthly price tables, a cell's usage lines and the
# janitor's listing ask of a kind (the types are Any where naming them would import the price book).
# (the monthly pricer, the kind's typed target spec, the MonthlyPrice to add to, the run's I/O rate) -> None
MonthlyPricing = Callable[[Any, Any, Any, float | None], None]
# (the price book, the benchmark spec, the cell or None, the line items) -> None
UsagePricing = Callable[[Any, Any, Any, Any], None]
# (the price book, the benchmark spec, the cell or None, the target's seconds, the line items) -> None
IoRequestPricing = Callable[[Any, Any, Any, float, Any], None]
# (clients) -> the janitor's Resources of the kind's own resource kinds still alive, found by their tags
Finder = Callable[[Any], Iterator[Any]]


@dataclass(frozen=True)
class Rehearsal:
    """How a rehearsal stands in for a kind: modules whose ``install(hooks)`` patch moto so that
    creating the kind's resources starts a real server, in install order, and that server in words."""

    services: tuple[str, ...]
    standin: str


@dataclass(frozen=True)
class AwsTargetKind:
    """One kind: a spec's ``target.provider`` (None for a runner kind, which owns resources too)."""

    name: str
    provider: str | None
    resources: tuple[ResourceKind, ...] = ()
    lister: str | None = None  # the service its ``find`` lists ``resources`` in (janitor.LISTERS' key)
    iam_list: tuple[str, ...] = ()  # what the lister calls
    iam_delete: tuple[str, ...] = ()  # what the deletion paths call
    # the rest of its IAM needs, each granted by infra/permissions.py to the stages that call it (the
    # union over the kinds: kinds.iam_actions); an action two kinds call is declared by both
    iam_describe: tuple[str, ...] = ()  # its reads (Describe/List: IAM scopes them to no resource)
    iam_create: tuple[str, ...] = ()  # creating it, tagging on create included (the run tag required)
    iam_modify: tuple[str, ...] = ()  # changes as it is made (its parameter group; run-tagged only)
    iam_events: tuple[str, ...] = ()  # its ``events``' calls (CheckRunner, on run-tagged resources)
    iam_operations: tuple[str, ...] = ()  # its operation benchmarks' creates (CheckOperations)
    iam_operations_delete: tuple[str, ...] = ()  # what they delete again, through the run session
    rehearsal: Rehearsal | None = None  # required: a kind no rehearsal stands in for is refused
    target: str | None = None  # "module:Class" of its AwsTarget (its folder's target.py), for a provider
    price: TargetPricer | None = None  # prices one target of the kind (None: nothing AWS bills us)
    price_services: tuple[str, ...] = ()  # the Price List services the kind's resources are priced from
    # prices and resources ----------------------------------------------------------
    monthly: MonthlyPricing | None = None  # a month of one target (monthly.py); required with ``price``
    describe: Callable[[Any], str] | None = None  # its configuration in the seed tables' words; ditto
    usage: UsagePricing | None = None  # what it bills by use beyond its hours (Aurora I/O, MemoryDB writes)
    io_requests: IoRequestPricing | None = None  # storage billed per I/O request (RDS magnetic)
    zones: Callable[[Any], list[str]] | None = None  # the AZs its target names (cross-AZ); ditto
    on_ec2: bool = False  # its nodes are EC2 instances, whose AWS/EC2 network series an EC2 runner's count
    find: Finder | None = None  # lists its own ``resources`` by tag, in its service ``lister``
    # the target field (RDS: "storage") whose gp2 bucket its stand-in models, started by a quick
    # rehearsal where the full spec's forecast says (rehearse/credits_carry.py); None: no bucket carried
    burst_start_field: str | None = None
    # timings and experiments: what the estimates, the stages and the spec's checks ask of
    # a kind before any provider exists live on its spec model (spec/target_facts.py: the spec layer
    # reads the model, never this descriptor); the kind names that model here
    spec: type[Any] | None = None  # its target section's model (its folder's spec.py MODEL), for a provider
    # (action, its API call (target, to) -> what was done) for the events its spec model allows
    # (the kind's own events.py has the calls; providers/aws/targets/events.trigger reads them here)
    events: tuple[tuple[str, Callable[[Any, Any], str]], ...] = ()

    def __post_init__(self) -> None:
        if self.resources and self.lister is None:
            raise ValueError(f"AWS kind {self.name}: resources without a lister are never found by tag")
        if self.rehearsal is None:
            raise ValueError(f"AWS kind {self.name}: no rehearsal stand-in (rehearsal=Rehearsal(...))")
        if (self.provider is None) != (self.target is None):
            raise ValueError(f"AWS kind {self.name}: a provider and its target class go together")
        if self.price is not None and not self.price_services:
            raise ValueError(f"AWS kind {self.name}: a price without the Price List services it reads")
        self._check_prices_and_resources()
        if (self.provider is None) != (self.spec is None):
            raise ValueError(f"AWS kind {self.name}: a provider and its spec model go together")

    def _check_prices_and_resources(self) -> None:
        """A kind with resources finds them itself; a priced kind prices a month too, and says where it
        sits (runner traffic across AZs)."""
        if self.price is not None and (self.monthly is None or self.describe is None):
            raise ValueError(f"AWS kind {self.name}: priced, but no monthly price (monthly=, describe=)")
        if self.resources and self.find is None:
            raise ValueError(f"AWS kind {self.name}: resources without find=, its lister by tag")
        if self.price is not None and self.zones is None:
            raise ValueError(
                f"AWS kind {self.name}: priced, but its AZs unknown to cross-AZ transfer (zones=)"
            )
