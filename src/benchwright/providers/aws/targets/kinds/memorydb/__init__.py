"""MemoryDB clusters: the kind's descriptor (kind.py) and its target class (target.py)."""
