"""The nightly view: a static site across nights (``benchwright site``), verdicts across nights and
the morning digest. nights.py reads the history, levels.py finds change points, svg.py draws, pages.py
writes the HTML, digest.py writes the morning message."""
