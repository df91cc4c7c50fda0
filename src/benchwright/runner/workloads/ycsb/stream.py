"""The run phase's operations for one client, drawn in blocks (issue 12: per-operation Python off the
hot path).

A block of ``BLOCK`` operations is drawn at once: the operation labels, then the record numbers of
each run of operations between two inserts (the newest record cannot change inside such a run), then
their keys and the requests, one list comprehension per step rather than a handful of Python calls
per operation. The semantics are YCSB's, as one operation at a time: the same operation mix and key
distributions (each draw by the same formula, tests/unit/test_ycsb_stream.py), a read never goes
past the newest record this client knows exists, run-phase inserts take this client's own slice of
record numbers. Only the order in which the random stream is consumed differs (labels first, then
keys, then values), the same for threads and for the event loop, so both send the same operations
from the same seed.

``make`` builds the requests: ``_Calls`` (threads) or a driver's ``KeyValueWire``; one that has
block methods (``reads``, ``updates``: a list of requests for a list of keys) builds a block with
one comprehension, any other one request at a time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from functools import cached_property
from itertools import chain, repeat, starmap
from math import floor
from operator import mul
from typing import Any

from benchwright.runner.workloads.base import BLOCK
from benchwright.runner.workloads.ycsb import generators as g
from benchwright.runner.workloads.ycsb.properties import CoreSettings

READ, UPDATE, INSERT, SCAN, RMW = "READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"
KINDS = (READ, UPDATE, SCAN, RMW)  # the order in which a block's requests are built (and draw)


class Values:
    """Record values: random printable text sliced from a pool at random offsets. ``record`` gives a
    whole record, ``one_field_block`` n one-field updates at once (constant field length)."""

    def __init__(
        self,
        rng: random.Random,
        settings: CoreSettings,
        names: list[str],
        size: int,
        make_pool: Callable[[], str],
    ) -> None:
        self.rng = rng
        self.names = names
        self.pool_size = size
        self._make_pool = make_pool
        self._overlap = settings.fieldlength * settings.fieldcount
        self.length = settings.fieldlength
        self.constant = settings.fieldlengthdistribution == "constant"
        self.lengths = g.LengthGenerator(
            rng, settings.fieldlengthdistribution, settings.minfieldlength, settings.fieldlength
        )

    @cached_property
    def pool(self) -> str:
        """Made on first use: a read-only run (workload C) never needs it. A run that writes makes
        it before the measured window (``RunStream`` asks for it when its mix writes): 65,536
        random draws per client are setup, not the work of its first operations."""
        pool = self._make_pool()
        assert len(pool) == self.pool_size
        return pool + pool[: self._overlap]

    @cached_property
    def pool_bytes(self) -> bytes:
        """``pool`` as bytes (its characters are ASCII): a wire request builder slices its values
        from here, with no encoding per operation."""
        return self.pool.encode("ascii")

    def record(self) -> dict[str, str]:
        pool, size = self.pool, self.pool_size
        offset = int(self.rng.random() * size)
        if self.constant:
            n = self.length
            return {name: pool[offset + i * n : offset + (i + 1) * n] for i, name in enumerate(self.names)}
        values = {}
        for name in self.names:
            n = self.lengths.next()
            values[name] = pool[offset : offset + n]
            offset = (offset + n) % size
        return values

    def one_field(self) -> dict[str, str]:
        """One field of a whole record, the field chosen at random (YCSB's writeallfields=false)."""
        record = self.record()
        name = self.names[int(self.rng.random() * len(self.names))]
        return {name: record[name]}

    def one_field_block(self, n: int) -> list[dict[str, str]]:
        """``n`` times ``one_field``, without making the fields that are not written."""
        if not self.constant:
            return [self.one_field() for _ in range(n)]
        r, pool, size, names, length = self.rng.random, self.pool, self.pool_size, self.names, self.length
        count, floor = len(names), math.floor  # floor: int for x >= 0, and a cheaper call
        picks = [(floor(r() * size), floor(r() * count)) for _ in range(n)]
        return [{names[i]: pool[o + i * length : o + (i + 1) * length]} for o, i in picks]

    def one_field_encoded_block(self, n: int) -> list[tuple[bytes, bytes]]:
        """``one_field_block`` (constant field length only) as (field name, value) pairs in bytes,
        from the same draws in the same order: the event loop's requests carry bytes, and this
        skips a dictionary and two encodings per update (issue 12)."""
        assert self.constant, "encoded blocks are for constant field lengths"
        pool, size, length = self.pool_bytes, self.pool_size, self.length
        names = [name.encode() for name in self.names]
        # one_field_block's 2n draws (an offset, then a field, per update), made at C level
        draws = list(starmap(self.rng.random, repeat((), 2 * n)))
        offsets = map(floor, map(mul, draws[::2], repeat(size)))
        if len(names) == 1:  # YCSB's one-field records: the field draw is always field 0
            name = names[0]
            return [(name, pool[o : o + length]) for o in offsets]
        fields = map(floor, map(mul, draws[1::2], repeat(len(names))))
        return [
            (names[i], pool[o + i * length : o + (i + 1) * length])
            for o, i in zip(offsets, fields, strict=True)
        ]


class RunStream:
    """One client's run phase: ``requests()`` is the endless stream of its operations."""

    def __init__(
        self,
        settings: CoreSettings,
        make: Any,
        thread_index: int,
        thread_count: int,
        rng: random.Random,
        chooser: Any,
        keys: Callable[[list[int]], list[str]],
        values: Values,
    ) -> None:
        s = settings
        self.make, self.rng, self.chooser, self.keys, self.values = make, rng, chooser, keys, values
        self.table = s.table
        self.names = values.names
        self.ops = g.DiscreteChooser(
            rng,
            [
                (READ, s.readproportion),
                (UPDATE, s.updateproportion),
                (INSERT, s.insertproportion),
                (SCAN, s.scanproportion),
                (RMW, s.readmodifywriteproportion),
            ],
        )
        self.low = s.insertstart
        self.high = s.insertstart + s.insertcount - 1
        self.recordcount = s.recordcount
        self.newest = s.recordcount - 1  # the newest record number this client knows exists
        self.thread_index, self.thread_count = thread_index, thread_count
        self.next_insert = s.recordcount + thread_index
        self.exponential = s.requestdistribution == "exponential"
        self.latest = self.exponential or s.requestdistribution == "latest"
        self.read_all = s.readallfields
        self.write_all = s.writeallfields
        self.scan_lengths = g.LengthGenerator(rng, s.scanlengthdistribution, s.minscanlength, s.maxscanlength)
        self.builders: dict[str, Callable[[list[str]], list[Any]]] = {
            READ: self._reads,
            UPDATE: self._updates,
            SCAN: self._scans,
            RMW: self._read_modify_writes,
        }
        # one-field updates straight to bytes when the builder takes them (the event loop's wire)
        self.encoded_updates: Callable[..., list[Any]] | None = (
            getattr(make, "updates_encoded", None) if values.constant and not s.writeallfields else None
        )
        if s.updateproportion + s.insertproportion + s.readmodifywriteproportion > 0:
            # made now, before the measured window starts, rather than by the first write
            _ = values.pool_bytes if self.encoded_updates is not None else values.pool

    def requests(self) -> Iterator[Any]:
        return chain.from_iterable(self.blocks())

    def blocks(self) -> Iterator[list[Any]]:
        """The endless stream in blocks of ``BLOCK`` requests (``requests``, not flattened)."""
        labels_of = self.ops.block
        while True:
            labels = labels_of(BLOCK)
            if INSERT not in labels:
                yield self._run_of(labels)
                continue
            block: list[Any] = []
            start = 0
            for at in [i for i, label in enumerate(labels) if label is INSERT]:
                if at > start:
                    block += self._run_of(labels[start:at])
                block.append(self._insert())
                start = at + 1
            if start < len(labels):
                block += self._run_of(labels[start:])
            yield block

    # -------------------------------------------------------------- a run between two inserts
    def _run_of(self, labels: list[str]) -> list[Any]:
        """The requests of ``labels`` (no insert among them), in their order."""
        keys = self.keys(self._numbers(len(labels)))
        first = labels[0]
        if labels.count(first) == len(labels):  # one kind (workload C, or a run of A's reads)
            return self.builders[first](keys)
        nexts = {}
        for kind in KINDS:  # a fixed order: the builders draw from the random stream
            if kind in labels:
                mine = [key for key, label in zip(keys, labels, strict=True) if label is kind]
                nexts[kind] = iter(self.builders[kind](mine)).__next__
        return [nexts[label]() for label in labels]

    def _numbers(self, n: int) -> list[int]:
        """``n`` record numbers to read or write: drawn from the key distribution, then kept to
        records that exist (YCSB's rules, as the one-at-a-time draw applied them)."""
        numbers: list[int] = self.chooser.block(n)
        if self.latest:
            if self.exponential:
                newest = self.newest
                numbers = [newest - x for x in numbers]
            low = self.low
            if min(numbers) < low:
                numbers = [x if x >= low else low for x in numbers]
        elif max(numbers) > self.newest:
            newest = self.newest
            numbers = [x if x <= newest else self._redraw() for x in numbers]
        if max(numbers) >= self.recordcount:
            numbers = [self._own(x) for x in numbers]
        return numbers

    def _redraw(self) -> int:
        """A draw past the newest record: draw again, as YCSB does (at most 100 times)."""
        newest, draw = self.newest, self.chooser.next
        for _ in range(100):
            number: int = draw()
            if number <= newest:
                return number
        return number % (newest + 1)

    def _own(self, number: int) -> int:
        """A record inserted during the run: keep to this client's own, already inserted ones."""
        recordcount = self.recordcount
        if number < recordcount:
            return number
        number -= (number - recordcount - self.thread_index) % self.thread_count
        if number < recordcount:
            number = min(self.high, recordcount - 1)
        return number

    def _insert(self) -> Any:
        number = self.next_insert
        request = self.make.insert(self.table, self.keys([number])[0], self.values.record())
        self.newest = max(self.newest, number)
        self.next_insert += self.thread_count
        if isinstance(self.chooser, g.SkewedLatestGenerator):
            self.chooser.advance(self.newest)
        return request

    # -------------------------------------------------------------- each kind, for a list of keys
    def _one_field(self) -> list[str] | None:
        """The fields a read, scan or read-modify-write reads: all (None) or one at random."""
        if self.read_all:
            return None
        return [self.names[int(self.rng.random() * len(self.names))]]

    def _write_block(self, n: int) -> list[dict[str, str]]:
        if self.write_all:
            record = self.values.record
            return [record() for _ in range(n)]
        return self.values.one_field_block(n)

    def _reads(self, keys: list[str]) -> list[Any]:
        fields = None if self.read_all else [self._one_field() for _ in keys]
        reads = getattr(self.make, "reads", None)
        if reads is not None:
            return reads(self.table, keys, fields)  # type: ignore[no-any-return]
        read, table = self.make.read, self.table
        if fields is None:
            return [read(table, key, None) for key in keys]
        return [read(table, key, f) for key, f in zip(keys, fields, strict=True)]

    def _updates(self, keys: list[str]) -> list[Any]:
        if self.encoded_updates is not None:
            return self.encoded_updates(self.table, keys, self.values.one_field_encoded_block(len(keys)))
        values = self._write_block(len(keys))
        updates = getattr(self.make, "updates", None)
        if updates is not None:
            return updates(self.table, keys, values)  # type: ignore[no-any-return]
        update, table = self.make.update, self.table
        return [update(table, key, v) for key, v in zip(keys, values, strict=True)]

    def _scans(self, keys: list[str]) -> list[Any]:
        scan, table, lengths = self.make.scan, self.table, self.scan_lengths
        return [scan(table, key, lengths.next(), self._one_field()) for key in keys]

    def _read_modify_writes(self, keys: list[str]) -> list[Any]:
        rmw, table = self.make.read_modify_write, self.table
        return [rmw(table, key, self._one_field(), self._write_block(1)[0]) for key in keys]
