"""ElastiCache Redis / Valkey replication groups: the kind's descriptor (kind.py) and its target class
(target.py)."""
