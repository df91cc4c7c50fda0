"""An existing database someone else runs: the kind's descriptor (kind.py) and its target class
(target.py)."""
