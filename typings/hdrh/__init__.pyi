# Type stubs for hdrhistogram (package ``hdrh``), which ships none: only what benchwright uses.
# Written from hdrh 0.10.8's source (histogram.py, codec.py, iterators.py); pinned in pyproject.toml.
