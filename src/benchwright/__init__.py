"""Benchwright: benchmark cloud databases end to end, honestly, and tear everything down."""

__version__ = "0.15.0"
