import ctypes
from typing import Any

from hdrh.histogram import HdrHistogram

class PayloadHeader(ctypes.BigEndianStructure):
    cookie: int
    payload_len: int
    normalizing_index_offset: int
    significant_figures: int
    lowest_trackable_value: int
    highest_trackable_value: int
    conversion_ratio_bits: float

class HdrPayload:
    word_size: int
    counts_len: int
    payload: PayloadHeader
    counts: ctypes.Array[Any]
    def __init__(
        self, word_size: int, counts_len: int = 0, compressed_payload: bytes | None = None
    ) -> None: ...
    def init_counts(self, counts_len: int) -> dict[str, int]: ...
    def get_counts(self) -> ctypes.Array[Any]: ...

class HdrHistogramEncoder:
    histogram: HdrHistogram
    payload: HdrPayload
    def __init__(
        self, histogram: HdrHistogram, b64_wrap: bool = True, hdr_payload: HdrPayload | None = None
    ) -> None: ...
    def get_counts(self) -> ctypes.Array[Any]: ...
    def encode(self) -> bytes: ...
    @staticmethod
    def decode(encoded_histogram: bytes, b64_wrap: bool = True) -> HdrPayload: ...
    def add(self, other_encoder: HdrHistogramEncoder) -> None: ...
